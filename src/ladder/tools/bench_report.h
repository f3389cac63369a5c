// `ladder bench`'s report for people: the summary block in vLLM's bench
// serve layout, and a table of a concurrency sweep's levels.
#pragma once

#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_request.h"

namespace ladder::tools {

// What was benchmarked, for the report's head and the JSON.
struct BenchInfo {
    std::string base_url;
    std::string model;
    std::string endpoint;  // "completions" or "chat"
    std::string dataset;   // "random", "prefix", "sharegpt FILE", "jsonl FILE"
    int64_t n_prompts = 0;
    uint64_t seed = 0;
    std::string date;  // local time, "20250101-120000" as vLLM names its files
    LatencySlo slo;
    std::optional<double> gpu_hour_cost;
    double burstiness = 1.0;  // of the arrivals' gamma gaps; 1: Poisson
    BenchSampling sampling;   // what each request asked for
};

// "greedy" or "temperature 1", then ", top_p 0.9, ..." for each other
// parameter sent (at temperature 0 the server ignores them, but they were sent).
std::string describe_sampling(const BenchSampling& sampling);

// "inf" or the rate with its unit.
std::string format_request_rate(double rate);

// The summary of one run, ending in a line of '='.
std::string format_summary(const BenchSummary& summary, const BenchInfo& info);

// The distinct errors of the failed requests, most frequent first, with
// their counts; at most `max_lines` lines.
std::string format_errors(const BenchRun& run, size_t max_lines);

// One row per sweep level: concurrency, throughputs, median and p99 of
// TTFT and TPOT, in Markdown.
std::string format_sweep_table(const std::vector<BenchSummary>& levels);

}  // namespace ladder::tools
