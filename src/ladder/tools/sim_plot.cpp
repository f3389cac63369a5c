#include "ladder/tools/sim_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

namespace ladder::tools {

namespace {

constexpr const char* kReplicasData = "sim_replicas.dat";
constexpr const char* kReplicasScript = "sim_replicas.gp";
constexpr const char* kReplicasLog = "sim_replicas.log";
constexpr const char* kReplicasChart = "slo_attainment_vs_replicas";

bool is_split(const std::vector<ReplicasTried>& tried) {
    return std::any_of(tried.begin(), tried.end(),
                       [](const ReplicasTried& row) { return row.n_prefill_replicas > 0; });
}

// A split search tries several pairs at one total: points labelled
// prefill+decode rather than one line through them.
std::string replicas_chart_script(double target, bool split) {
    const std::string simulated =
        split ? "D using 1:2 with points pt 7 ps 1.2 title 'simulated (prefill+decode)', "
                "D using 1:2:(sprintf('%d+%d', $3, $4)) with labels offset 0,1 notitle"
              : "D using 1:2 with linespoints lw 2 pt 7 title 'simulated'";
    return fmt::format(
        "# Written by `ladder simulate --plot`; run `gnuplot {0}` here to draw it again.\n"
        "D = '{1}'\n"
        "png_terminal = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? "
        "'pngcairo size 960,600 font \"sans,11\"' : 'png size 960,600'\n"
        "set title 'Requests meeting the SLOs vs replicas (--find-min-replicas)'\n"
        "set grid\nset key bottom right box opaque\n"
        "set xlabel '{4}'\nset ylabel 'requests meeting the SLOs (%)'\n"
        "set yrange [0:105]\nset offsets graph 0.05, graph 0.05, 0, 0\n"
        "set terminal @png_terminal\nset output '{2}.png'\n"
        "plot {5}, {3:.4f} with lines dt 2 lw 2 title 'target {3:.1f}%'\n"
        "set terminal svg size 960,600 dynamic font 'sans,11' background rgb 'white'\n"
        "set output '{2}.svg'\nreplot\nunset output\n",
        kReplicasScript, kReplicasData, kReplicasChart, 100.0 * target,
        split ? "replicas (prefill + decode)" : "replicas", simulated);
}

}  // namespace

std::string replicas_chart_data(const std::vector<ReplicasTried>& tried) {
    std::vector<ReplicasTried> sorted = tried;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return std::pair(a.n_replicas, a.n_prefill_replicas) <
               std::pair(b.n_replicas, b.n_prefill_replicas);
    });
    const bool split = is_split(tried);
    std::string out = split ? "# replicas slo_attainment_percent prefill_replicas decode_replicas\n"
                            : "# replicas slo_attainment_percent\n";
    for (const ReplicasTried& row : sorted) {
        out += fmt::format("{} {:.4f}", row.n_replicas, 100.0 * row.shares.both);
        out +=
            split ? fmt::format(" {} {}\n", row.n_prefill_replicas, row.n_decode_replicas) : "\n";
    }
    return out;
}

PlotOutcome draw_simulation_charts(const std::string& dir, const std::vector<BenchSummary>& levels,
                                   const std::vector<ReplicasTried>& tried, double target) {
    PlotOutcome outcome = draw_charts(dir, levels);
    if (!outcome.problem.empty() || tried.empty()) return outcome;
    const std::filesystem::path folder(dir);
    std::ofstream(folder / kReplicasData) << replicas_chart_data(tried);
    std::ofstream(folder / kReplicasScript) << replicas_chart_script(target, is_split(tried));
    outcome.problem = run_gnuplot(dir, kReplicasScript, kReplicasLog);
    if (outcome.problem.empty()) outcome.charts.push_back(kReplicasChart);
    return outcome;
}

}  // namespace ladder::tools
