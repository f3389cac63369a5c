// What GET /metrics reports: the engine's gauges and counters and the
// latency histograms of finished requests, in Prometheus text under names a
// vLLM dashboard knows (`vllm:` becomes `ladder:`, same meaning).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>

#include "ladder/engine/engine_core.h"
#include "ladder/engine/request.h"
#include "ladder/server/histogram.h"

namespace ladder::server {

// What the HTTP transport counts, on its event loop; /metrics reads them.
struct HttpCounters {
    std::atomic<int64_t> n_connections{0};           // open now
    std::atomic<int64_t> n_connections_refused{0};   // the server was full
    std::atomic<int64_t> n_connections_evicted{0};   // made room for another address
    std::atomic<int64_t> n_request_timeouts{0};      // 408: not all there in time
    std::atomic<int64_t> n_slow_readers_dropped{0};  // a write waited past --timeout
    std::atomic<int64_t> n_clients_gone{0};          // left while their request ran (aborted)
};

class ServerMetrics {
public:
    ServerMetrics();

    HttpCounters http;

    // The output that finished an engine request (it carries the timings).
    // Called on the engine thread: cheap, one short lock.
    void record_finished(const engine::RequestOutput& last);

    // Seconds from outputs leaving the engine to their SSE chunk being
    // handed to the socket. Event loop: one short lock.
    void record_stream_delays(std::span<const double> seconds);

    std::string render(const engine::EngineStats& stats, const std::string& model_name) const;

private:
    mutable std::mutex mutex_;
    Histogram time_to_first_token_;
    Histogram time_per_output_token_;
    Histogram e2e_request_latency_;
    Histogram request_queue_time_;
    Histogram request_prefill_time_;
    Histogram request_decode_time_;
    Histogram request_prompt_tokens_;
    Histogram request_generation_tokens_;
    Histogram stream_delay_;
    std::map<std::string, int64_t> n_finished_by_reason_;
};

}  // namespace ladder::server
