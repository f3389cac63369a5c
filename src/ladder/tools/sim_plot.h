// `ladder simulate --plot DIR`: bench's charts (bench_plot) of the run, or
// of every rate of a --sweep-request-rate (latency vs load), and with
// --find-min-replicas a chart of each fleet tried (a replica count, or a
// prefill + decode pair) against the share of requests meeting the SLOs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_plot.h"
#include "ladder/tools/sim_replica_search.h"

namespace ladder::tools {

// sim_replicas.dat: one row per fleet tried, sorted by its replicas (then
// its prefill replicas): the replicas and the share meeting the SLOs, and for
// a disaggregated search the prefill and decode counts after them.
std::string replicas_chart_data(const std::vector<ReplicasTried>& tried);

// Draws bench's charts of `levels` into `dir`, and with `tried` given
// slo_attainment_vs_replicas (the target as a line; a split's points
// labelled prefill+decode). A missing or failing gnuplot is reported in the
// outcome, not thrown.
PlotOutcome draw_simulation_charts(const std::string& dir, const std::vector<BenchSummary>& levels,
                                   const std::vector<ReplicasTried>& tried, double target);

}  // namespace ladder::tools
