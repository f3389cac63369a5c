// `ladder simulate --plot DIR`: bench's charts (bench_plot) of the run, or
// of every rate of a --sweep-request-rate (latency vs load), and with
// --find-min-replicas a chart of each replica count tried against the share
// of requests meeting the SLOs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_plot.h"

namespace ladder::tools {

// One count --find-min-replicas tried.
struct ReplicasTried {
    int32_t n_replicas = 0;
    double attainment = 0.0;  // share of requests meeting the SLOs
};

// sim_replicas.dat: one row per count tried, sorted by count.
std::string replicas_chart_data(const std::vector<ReplicasTried>& tried);

// Draws bench's charts of `levels` into `dir`, and with `tried` given
// slo_attainment_vs_replicas (the target as a line). A missing or failing
// gnuplot is reported in the outcome, not thrown.
PlotOutcome draw_simulation_charts(const std::string& dir, const std::vector<BenchSummary>& levels,
                                   const std::vector<ReplicasTried>& tried, double target);

}  // namespace ladder::tools
