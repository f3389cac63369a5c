// A benchmark run's figures, as vLLM's bench serve reports them: counts,
// throughputs, latency distributions, goodput, and ladder's additions (the
// share of prompt tokens served from the prefix cache, cost per million).
#pragma once

#include <cstdint>
#include <optional>

#include "ladder/engine/spec_decode_stats.h"
#include "ladder/tools/bench_runner.h"
#include "ladder/tools/bench_stats.h"

namespace ladder::tools {

// One latency metric over the run, in milliseconds.
struct Distribution {
    double mean = 0.0;
    double median = 0.0;
    double stddev = 0.0;
    double p90 = 0.0;
    double p99 = 0.0;
};
Distribution distribution_ms(std::span<const double> values_s);

struct SummaryOptions {
    LatencySlo slo;
    std::optional<double> gpu_hour_cost;  // $ per GPU-hour
    int32_t gpus_per_replica = 1;
};

struct BenchSummary {
    double duration_s = 0.0;
    int64_t max_concurrency = 0;  // 0: none
    double request_rate = 0.0;    // infinite: all at once
    int64_t n_completed = 0;
    int64_t n_failed = 0;
    int64_t total_input_tokens = 0;   // of completed requests
    int64_t total_output_tokens = 0;  // of completed requests
    double request_throughput = 0.0;  // completed / duration
    double input_throughput = 0.0;    // tokens/s
    double output_throughput = 0.0;
    double total_token_throughput = 0.0;
    Distribution ttft_ms;
    Distribution tpot_ms;  // requests of two tokens or more
    Distribution itl_ms;   // every gap of every request
    Distribution e2el_ms;
    // Little's law: the mean number of requests in flight (sum of E2E / duration).
    double mean_concurrency = 0.0;
    // With SLOs: completed requests that met them, and those per second.
    std::optional<int64_t> n_good;
    std::optional<double> request_goodput;
    // Cached prompt tokens over all prompt tokens, of the requests whose
    // usage reported cached_tokens; none when no request did.
    int64_t total_cached_tokens = 0;
    std::optional<double> cached_token_share;
    // Completed requests whose stream's chunk count differs from their usage,
    // and those that reported no usage at all.
    int64_t n_usage_mismatches = 0;
    int64_t n_without_usage = 0;
    std::optional<double> cost_per_million_output_tokens;
    std::optional<double> cost_per_million_total_tokens;
    // The server's speculative-decoding counters over the run (the
    // difference of its /metrics before and after); none when it has none.
    std::optional<engine::SpecDecodeStats> spec_decode;
};

BenchSummary summarize(const BenchRun& run, const SummaryOptions& options);

// What summarize counts besides the latency distributions, a request at a
// time, so that a summary built without holding the run (the simulator's
// millions of requests) counts the same way.
struct RequestTotals {
    int64_t n_completed = 0;
    int64_t n_failed = 0;
    int64_t total_input_tokens = 0;
    int64_t total_output_tokens = 0;
    int64_t total_cached_tokens = 0;
    int64_t n_cache_prompt_tokens = 0;  // prompt tokens of requests that reported cached tokens
    int64_t n_good = 0;
    double sum_e2e_s = 0.0;
    int64_t n_usage_mismatches = 0;
    int64_t n_without_usage = 0;
    // Counts one request; returns its TPOT when it completed with two tokens or more.
    std::optional<double> add(const RequestResult& result, const LatencySlo& slo);
};
// The summary's counts, throughputs, goodput and costs from the totals over
// `duration_s`; the distributions are left as they are.
void apply_totals(const RequestTotals& totals, double duration_s, const SummaryOptions& options,
                  BenchSummary& summary);

}  // namespace ladder::tools
