// `ladder simulate`: makes the workload `ladder bench` would send, runs it
// through the simulated fleet, and reports it as bench does (same summary,
// same JSON keys), with the simulation's own figures after.
#pragma once

#include <string>

#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_report.h"
#include "ladder/tools/simulator.h"

namespace ladder::tools {

struct SimulateConfig {
    SimulationOptions simulation;
    DatasetOptions dataset;
    SummaryOptions summary;
    std::string json_path;  // empty: no JSON
};

// The simulation's figures under `ladder bench --json`'s keys, plus
// `simulated` (profile, replicas, router, steps, preemptions, peak KV use,
// prefix hit share).
nlohmann::json simulation_json(const SimulationResult& result, const BenchSummary& summary,
                               const BenchInfo& info, const SimulateConfig& config);

// Prints the profile's source, the summary and the simulation's figures;
// throws util::InputError on bad options.
void run_simulation(const SimulateConfig& config);

}  // namespace ladder::tools
