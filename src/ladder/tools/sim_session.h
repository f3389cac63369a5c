// `ladder simulate`: makes the workload `ladder bench` would send (or reads
// a trace), runs it through the simulated fleet, and reports it as bench
// does (same summary, same JSON keys), with the simulation's own figures after.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_report.h"
#include "ladder/tools/sim_replica_search.h"
#include "ladder/tools/simulator.h"

namespace ladder::tools {

struct SimulateConfig {
    SimulationOptions simulation;
    DatasetOptions dataset;
    SummaryOptions summary;
    // A trace (JSONL of arrival_s, input_len, output_len, prefix_id,
    // prefix_len) replayed instead of the dataset; its times replace the rate.
    std::string replay_path;
    bool n_prompts_given = false;  // --num-prompts was given: a trace stops there
    std::string json_path;         // empty: no JSON
    bool show_progress = true;     // the progress line on stderr
    // Search for the fewest replicas at which at least `slo_attainment` of
    // the requests meet the SLOs (goodput / throughput), then report that run:
    // --replicas, or with a split the prefill and decode counts, from the
    // given ones up to max_replicas in all.
    bool find_min_replicas = false;
    double slo_attainment = 0.99;
    int32_t max_replicas = 4096;  // the search gives up above this
    // Runs the workload at each of these request rates in turn (a report
    // each); empty: once, at simulation.arrivals.request_rate.
    std::vector<double> sweep_request_rates;
    std::string plot_dir;  // bench's charts of the runs (and the search) here; empty: none
};

// Runs of at most this many requests are kept whole: the summary's
// percentiles are exact and --json carries bench's per-request arrays.
// Longer runs are summarised as they go (sim_summary.h).
constexpr int64_t kMaxRecordedRequests = 100000;

// The simulation's figures under `ladder bench --json`'s keys, plus
// `simulated` (profile, replicas, router, steps, preemptions, peak KV use,
// prefix hit share, and each fleet --find-min-replicas tried).
nlohmann::json simulation_json(const SimulationResult& result, const BenchSummary& summary,
                               const BenchInfo& info, const SimulateConfig& config,
                               std::span<const ReplicasTried> tried = {});

// Prints the profile's source, the summary and the simulation's figures
// (with --find-min-replicas, each count tried and the run at the fewest
// that meets the SLOs); throws util::InputError on bad options.
void run_simulation(const SimulateConfig& config);

}  // namespace ladder::tools
