// `ladder simulate convert`: turns what exists into the simulator's traces
// (sim_workload.h's JSONL): a `ladder bench --json` result (its arrival
// times, when it has them, and its measured lengths) or a ShareGPT file (its
// estimated lengths, arriving at a given rate).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_request.h"
#include "ladder/tools/sim_workload.h"

namespace ladder::tools {

// From bench's per-request arrays: input_lens, output_lens, and start_times
// (ladder bench writes it; arrivals from `arrivals` when it is absent, as in
// vLLM's files). Failed requests (errors not empty, or no output) are left
// out. Throws util::InputError naming the file and the key.
std::vector<TraceRecord> trace_from_bench_json(const nlohmann::json& result,
                                               const std::string& name,
                                               const ArrivalOptions& arrivals, uint64_t seed);
// Prompts (a ShareGPT file's, through bench's dataset reader) at the given arrivals.
std::vector<TraceRecord> trace_from_prompts(const std::vector<BenchPrompt>& prompts,
                                            const ArrivalOptions& arrivals, uint64_t seed);
// One line a record; throws util::InputError naming the file.
void write_trace(const std::string& path, const std::vector<TraceRecord>& records);

}  // namespace ladder::tools
