// The workload flags `ladder bench` and `ladder simulate` share, defined once
// so that a bench run against a server and its simulation take the same
// arguments and compare directly.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/bench_metrics.h"

namespace ladder::cli {

// What the flags give before it is mapped onto the tools' options (a field
// given only when its flag was, so each dataset keeps its own defaults).
struct WorkloadFlags {
    std::string endpoint = "completions";
    std::vector<std::string> dataset = {"random"};  // KIND [FILE]
    int64_t input_len = 0;
    int64_t output_len = 0;
    std::string request_rate = "inf";
    double burstiness = 1.0;
    double slo_ttft_ms = 0.0;
    double slo_tpot_ms = 0.0;
    double gpu_hour_cost = 0.0;
};

// --endpoint.
void add_endpoint_flag(CLI::App& command, WorkloadFlags& flags);
// --dataset, --input-len, --output-len, --range-ratio, --prefix-len,
// --num-prefixes, --num-prompts, --seed.
void add_dataset_flags(CLI::App& command, WorkloadFlags& flags, tools::DatasetOptions& dataset);
// --request-rate (parsed by tools::parse_request_rate) and --burstiness.
void add_request_rate_flag(CLI::App& command, WorkloadFlags& flags);
// --slo-ttft-ms, --slo-tpot-ms, --gpu-hour-cost.
void add_goodput_flags(CLI::App& command, WorkloadFlags& flags);

// The endpoint, dataset and lengths into dataset; the SLOs and cost given
// into summary.
void apply_workload_flags(const CLI::App& command, const WorkloadFlags& flags,
                          tools::DatasetOptions& dataset, tools::SummaryOptions& summary);

}  // namespace ladder::cli
