// `ladder bench --plot DIR`: charts of one run or a concurrency sweep,
// drawn by gnuplot (Debian's gnuplot-nox) from a data file and a script that
// ladder writes next to them, so a chart can be redrawn or restyled by hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"

namespace ladder::tools {

// gnuplot's path on PATH, if it is installed.
std::optional<std::string> find_gnuplot();

// Makes the charts folder before a run, so a bad path fails in a second
// (util::InputError); warns on stderr, as `program`, when gnuplot is missing
// and says what is still written.
void prepare_plot_dir(const std::string& dir, const std::string& program,
                      const std::string& still_written);

// Runs gnuplot on `script` (a file in `dir`) there, its output in `log`:
// empty when it exited 0, else why it did not (a missing gnuplot, or its
// status and last lines).
std::string run_gnuplot(const std::string& dir, const std::string& script, const std::string& log);

struct PlotOutcome {
    std::vector<std::string> charts;  // base names: each has a .png and a .svg in the dir
    std::string problem;              // why there are none; empty when drawn
};

// The data file (one row per level, sorted by concurrency) and the script.
std::string chart_data(const std::vector<BenchSummary>& levels);
std::string chart_script(bool sweep);

// Writes bench_levels.dat and bench_charts.gp into `dir` (which must exist)
// and runs gnuplot there: throughput vs concurrency, TTFT and TPOT
// percentiles vs throughput, E2E latency vs throughput, and speed per user
// vs throughput. A missing or failing gnuplot is reported, not thrown.
PlotOutcome draw_charts(const std::string& dir, const std::vector<BenchSummary>& levels);

}  // namespace ladder::tools
