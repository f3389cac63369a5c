// `ladder bench --json`: a run under the key names of vLLM's saved results
// (`vllm bench serve --save-result`), so `ladder cost --from-bench` and
// scripts written for vLLM read it, plus ladder's own keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_report.h"

namespace ladder::tools {

// One run: the summary's figures (`completed`, `failed`, `request_throughput`,
// `output_throughput`, `total_token_throughput`, `mean_ttft_ms`,
// `median_ttft_ms`, `std_ttft_ms`, `p90_ttft_ms`, `p99_ttft_ms`, the same for
// tpot, itl and e2el, ...) and per-request arrays (`input_lens`,
// `output_lens`, `ttfts` and `itls` in seconds, `errors`, ...).
nlohmann::json bench_result_json(const BenchRun& run, const BenchSummary& summary,
                                 const BenchInfo& info);
// The same without the per-request arrays (input_lens, ttfts, itls, ...):
// for runs of more requests than a JSON file should hold.
nlohmann::json bench_summary_json(const BenchSummary& summary, const BenchInfo& info);

// A sweep: the level with the highest output throughput at the top level
// (so that `ladder cost --from-bench` prices the peak), and every level's
// object under `sweep`, in the order run.
nlohmann::json sweep_result_json(const std::vector<nlohmann::json>& levels);

// Writes the JSON, indented; throws util::InputError when it cannot.
void write_json_file(const std::string& path, const nlohmann::json& value);

}  // namespace ladder::tools
