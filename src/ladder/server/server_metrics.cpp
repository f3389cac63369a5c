#include "ladder/server/server_metrics.h"

#include <fmt/format.h>

#include <tuple>

namespace ladder::server {

namespace {

// vLLM's buckets, so that dashboards built for it read these the same way.
std::vector<double> ttft_buckets() {
    return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
            1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> tpot_buckets() {
    return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
            0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> request_time_buckets() {
    return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
            30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}
std::vector<double> token_count_buckets() {
    return {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
}

// What the server adds to a token's way out: well under a millisecond.
std::vector<double> stream_delay_buckets() {
    return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
            0.01,    0.025,  0.05,    0.1,    0.25,  1.0};
}

// A span between two timings, when both were reached.
bool span(double from, double to, double& seconds) {
    if (from <= 0.0 || to <= 0.0 || to < from) return false;
    seconds = to - from;
    return true;
}

void append_metric(std::string& out, std::string_view type, std::string_view name,
                   std::string_view help, std::string_view labels, double value) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n{}{{{}}} {}\n", name, help,
                   name, type, name, labels, value);
}

// Label values escape backslash, quote and newline (the exposition format).
std::string label_value(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out;
}

// Speculative decoding's counters, present only when it is on (as in vLLM).
void render_spec_decode(std::string& out, const engine::EngineStats& stats,
                        const std::string& labels) {
    const engine::SpecDecodeStats& spec = stats.spec_decode;
    append_metric(out, "counter", "ladder:spec_decode_num_drafts_total",
                  "Verifications of one or more drafted tokens.", labels,
                  static_cast<double>(spec.n_drafts));
    append_metric(out, "counter", "ladder:spec_decode_num_draft_tokens_total",
                  "Tokens drafted and verified.", labels, static_cast<double>(spec.n_draft_tokens));
    append_metric(out, "counter", "ladder:spec_decode_num_accepted_tokens_total",
                  "Drafted tokens accepted.", labels, static_cast<double>(spec.n_accepted_tokens));
    constexpr const char* kPerPosition = "ladder:spec_decode_num_accepted_tokens_per_pos_total";
    fmt::format_to(std::back_inserter(out),
                   "# HELP {} Drafted tokens accepted, by position in the draft.\n# TYPE {} "
                   "counter\n",
                   kPerPosition, kPerPosition);
    for (size_t position = 0; position < spec.n_accepted_per_position.size(); ++position) {
        fmt::format_to(std::back_inserter(out), "{}{{{},position=\"{}\"}} {}\n", kPerPosition,
                       labels, position, spec.n_accepted_per_position[position]);
    }
}

}  // namespace

ServerMetrics::ServerMetrics()
    : time_to_first_token_(ttft_buckets()),
      time_per_output_token_(tpot_buckets()),
      e2e_request_latency_(request_time_buckets()),
      request_queue_time_(request_time_buckets()),
      request_prefill_time_(request_time_buckets()),
      request_decode_time_(request_time_buckets()),
      request_prompt_tokens_(token_count_buckets()),
      request_generation_tokens_(token_count_buckets()),
      stream_delay_(stream_delay_buckets()),
      n_finished_by_reason_{{"stop", 0}, {"length", 0}, {"abort", 0}, {"error", 0}} {}

void ServerMetrics::record_finished(const engine::RequestOutput& last) {
    const engine::RequestTimings& t = last.timings;
    const std::lock_guard lock(mutex_);
    double seconds = 0.0;
    if (span(t.arrival, t.first_token, seconds)) time_to_first_token_.observe(seconds);
    if (last.n_generated_tokens > 1 && span(t.first_token, t.finished, seconds)) {
        time_per_output_token_.observe(seconds / (last.n_generated_tokens - 1));
    }
    if (span(t.arrival, t.finished, seconds)) e2e_request_latency_.observe(seconds);
    if (span(t.arrival, t.first_scheduled, seconds)) request_queue_time_.observe(seconds);
    if (span(t.first_scheduled, t.first_token, seconds)) request_prefill_time_.observe(seconds);
    if (span(t.first_token, t.finished, seconds)) request_decode_time_.observe(seconds);
    request_prompt_tokens_.observe(last.n_prompt_tokens);
    request_generation_tokens_.observe(last.n_generated_tokens);
    if (last.finish_reason)
        ++n_finished_by_reason_[engine::finish_reason_name(*last.finish_reason)];
}

void ServerMetrics::record_stream_delays(std::span<const double> seconds) {
    const std::lock_guard lock(mutex_);
    for (const double value : seconds) stream_delay_.observe(value);
}

std::string ServerMetrics::render(const engine::EngineStats& stats,
                                  const std::string& model_name) const {
    const std::string labels = fmt::format("model_name=\"{}\"", label_value(model_name));
    const double kv_usage =
        stats.n_blocks > 0 ? static_cast<double>(stats.n_blocks_used) / stats.n_blocks : 0.0;
    struct Sample {
        const char* type;
        const char* name;
        const char* help;
        double value;
    };
    const Sample engine_samples[] = {
        {"gauge", "ladder:num_requests_running", "Requests in the running batch.",
         static_cast<double>(stats.n_running)},
        {"gauge", "ladder:num_requests_waiting", "Requests waiting to run.",
         static_cast<double>(stats.n_waiting)},
        {"gauge", "ladder:kv_cache_usage_perc", "KV cache usage: 1 means every block is in use.",
         kv_usage},
        {"gauge", "ladder:kv_cache_blocks_used", "KV cache blocks held by requests.",
         static_cast<double>(stats.n_blocks_used)},
        {"gauge", "ladder:kv_cache_blocks_total", "KV cache blocks in all.",
         static_cast<double>(stats.n_blocks)},
        {"counter", "ladder:num_preemptions_total",
         "Requests preempted (their KV freed and recomputed later).",
         static_cast<double>(stats.n_preemptions)},
        {"counter", "ladder:prompt_tokens_total",
         "Prompt tokens of requests that reached their first token (cached ones included).",
         static_cast<double>(stats.n_prompt_tokens)},
        {"counter", "ladder:generation_tokens_total", "Tokens generated.",
         static_cast<double>(stats.n_generated_tokens)},
        {"counter", "ladder:prefix_cache_queries_total",
         "Prompt tokens looked up in the prefix cache.",
         static_cast<double>(stats.n_prefix_queried_tokens)},
        {"counter", "ladder:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.",
         static_cast<double>(stats.n_prefix_hit_tokens)},
        {"counter", "ladder:kv_remote_hits_total",
         "Prompt tokens whose KV was read from the remote tier (--kv-remote).",
         static_cast<double>(stats.remote.n_hit_blocks * stats.n_block_size)},
        {"counter", "ladder:kv_remote_errors_total",
         "Remote-tier connections, commands and reads that failed or came too late.",
         static_cast<double>(stats.remote.n_errors)},
        {"counter", "ladder:kv_remote_timeouts_total",
         "Remote-tier reads past their deadline (counted in the errors too).",
         static_cast<double>(stats.remote.n_timeouts)},
        {"counter", "ladder:kv_remote_rejected_blocks_total",
         "Blocks found in the remote tier but not loaded: another model, shape or type, or a "
         "bad checksum.",
         static_cast<double>(stats.remote.n_rejected_blocks)},
        {"counter", "ladder:kv_remote_bytes_written_total",
         "Bytes of KV blocks written to the remote tier.",
         static_cast<double>(stats.remote.n_bytes_written)},
        {"counter", "ladder:kv_remote_dropped_writes_total",
         "Blocks not written to the remote tier: queue full, breaker open or a failed write.",
         static_cast<double>(stats.remote.n_dropped_writes)},
        {"counter", "ladder:kv_remote_breaker_opened_total",
         "Times the remote tier's breaker opened after repeated errors.",
         static_cast<double>(stats.remote.n_breaker_opened)},
        {"gauge", "ladder:kv_remote_breaker_open",
         "1 while the remote tier's breaker is open (Redis is not being asked).",
         stats.remote.breaker_open ? 1.0 : 0.0},
        {"gauge", "ladder:http_connections", "HTTP connections open.",
         static_cast<double>(http.n_connections.load())},
        {"counter", "ladder:http_connections_refused_total",
         "Connections refused because the server held --max-connections.",
         static_cast<double>(http.n_connections_refused.load())},
        {"counter", "ladder:http_connections_evicted_total",
         "Idle or unfinished connections closed to make room for another address.",
         static_cast<double>(http.n_connections_evicted.load())},
        {"counter", "ladder:http_request_timeouts_total",
         "Requests that had not arrived whole within --request-timeout (408).",
         static_cast<double>(http.n_request_timeouts.load())},
        {"counter", "ladder:http_slow_readers_dropped_total",
         "Connections dropped because the client took no data for --timeout.",
         static_cast<double>(http.n_slow_readers_dropped.load())},
        {"counter", "ladder:http_clients_gone_total",
         "Clients that left while their request ran (the request was aborted).",
         static_cast<double>(http.n_clients_gone.load())},
    };
    std::string out;
    for (const Sample& sample : engine_samples) {
        append_metric(out, sample.type, sample.name, sample.help, labels, sample.value);
    }
    if (!stats.spec_decode.n_accepted_per_position.empty()) render_spec_decode(out, stats, labels);

    const std::lock_guard lock(mutex_);
    out += "# HELP ladder:request_success_total Requests finished, by finish reason.\n";
    out += "# TYPE ladder:request_success_total counter\n";
    for (const auto& [reason, count] : n_finished_by_reason_) {
        fmt::format_to(std::back_inserter(out),
                       "ladder:request_success_total{{{},finished_reason=\"{}\"}} {}\n", labels,
                       reason, count);
    }
    const std::tuple<const Histogram&, const char*, const char*> histograms[] = {
        {time_to_first_token_, "ladder:time_to_first_token_seconds",
         "Time from arrival to the first token."},
        {time_per_output_token_, "ladder:time_per_output_token_seconds",
         "Time per output token after the first."},
        {e2e_request_latency_, "ladder:e2e_request_latency_seconds",
         "Time from arrival to the last token."},
        {request_queue_time_, "ladder:request_queue_time_seconds",
         "Time from arrival to the first step that ran the request."},
        {request_prefill_time_, "ladder:request_prefill_time_seconds",
         "Time from the first step to the first token."},
        {request_decode_time_, "ladder:request_decode_time_seconds",
         "Time from the first token to the last."},
        {request_prompt_tokens_, "ladder:request_prompt_tokens",
         "Prompt tokens per finished request."},
        {request_generation_tokens_, "ladder:request_generation_tokens",
         "Generated tokens per finished request."},
        {stream_delay_, "ladder:stream_delay_seconds",
         "Time from an output leaving the engine to its SSE chunk being written."},
    };
    for (const auto& [histogram, name, help] : histograms) {
        histogram.render(out, name, help, labels);
    }
    return out;
}

}  // namespace ladder::server
