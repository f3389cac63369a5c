// What GET /metrics reports: the engine's gauges and counters and the
// latency histograms of finished requests, in Prometheus text under names a
// vLLM dashboard knows (`vllm:` becomes `ladder:`, same meaning).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "ladder/engine/engine_core.h"
#include "ladder/engine/request.h"
#include "ladder/server/histogram.h"

namespace ladder::server {

class ServerMetrics {
public:
    ServerMetrics();

    // The output that finished an engine request (it carries the timings).
    // Called on the engine thread: cheap, one short lock.
    void record_finished(const engine::RequestOutput& last);

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
    std::map<std::string, int64_t> n_finished_by_reason_;
};

}  // namespace ladder::server
