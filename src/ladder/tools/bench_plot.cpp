#include "ladder/tools/bench_plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr const char* kDataFile = "bench_levels.dat";
constexpr const char* kScriptFile = "bench_charts.gp";
constexpr const char* kLogFile = "bench_charts.log";

// The x of a level: its concurrency limit, or without one the mean number
// of requests in flight (what the load amounted to).
double concurrency_of(const BenchSummary& level) {
    return level.max_concurrency > 0 ? static_cast<double>(level.max_concurrency)
                                     : level.mean_concurrency;
}

struct Chart {
    const char* name;
    const char* title;
    const char* settings;  // axes and labels
    const char* plot;      // the plot command, over the data file
};

// Columns of bench_levels.dat: 1 concurrency, 2 output tok/s, 3 total tok/s,
// 4 req/s, 5-7 TTFT p50/p90/p99 ms, 8-10 TPOT p50/p90/p99 ms, 11-12 E2E
// p50/p99 ms, 13 tok/s per user (1000 / median TPOT), 14 label.
const Chart kCharts[] = {
    {"throughput_vs_concurrency", "Throughput vs concurrency",
     "set xlabel 'concurrency (limit, or mean requests in flight)'\n"
     "set ylabel 'tokens/s'\nset y2label 'requests/s'\nset y2tics\nset ytics nomirror\n",
     "plot D using 1:2 with linespoints lw 2 pt 7 title 'output tok/s', "
     "D using 1:3 with linespoints lw 2 pt 5 title 'total tok/s', "
     "D using 1:4 axes x1y2 with linespoints lw 2 pt 9 dt 2 title 'requests/s (right)'"},
    {"ttft_vs_throughput", "Time to first token vs throughput",
     "set xlabel 'output tokens/s'\nset ylabel 'TTFT (ms)'\n",
     "plot D using 2:5 with linespoints lw 2 pt 7 title 'median', "
     "D using 2:6 with linespoints lw 2 pt 5 title 'p90', "
     "D using 2:7 with linespoints lw 2 pt 9 title 'p99', "
     "D using 2:7:14 with labels offset 0,1 notitle"},
    {"tpot_vs_throughput", "Time per output token vs throughput",
     "set xlabel 'output tokens/s'\nset ylabel 'TPOT (ms)'\n",
     "plot D using 2:8 with linespoints lw 2 pt 7 title 'median', "
     "D using 2:9 with linespoints lw 2 pt 5 title 'p90', "
     "D using 2:10 with linespoints lw 2 pt 9 title 'p99', "
     "D using 2:10:14 with labels offset 0,1 notitle"},
    {"latency_vs_throughput", "Latency-throughput trade-off (labels: concurrency)",
     "set xlabel 'output tokens/s'\nset ylabel 'end-to-end latency (ms)'\n",
     "plot D using 2:11 with linespoints lw 2 pt 7 title 'median E2E', "
     "D using 2:12 with linespoints lw 2 pt 5 title 'p99 E2E', "
     "D using 2:11:14 with labels offset 0,1 notitle"},
    {"user_speed_vs_throughput", "Speed per user vs total throughput (labels: concurrency)",
     "set xlabel 'output tokens/s, all users'\nset ylabel 'tokens/s per user (1000 / median "
     "TPOT)'\n",
     "plot D using 2:13 with linespoints lw 2 pt 7 title 'per user', "
     "D using 2:13:14 with labels offset 0,1 notitle"},
};

bool is_executable(const std::filesystem::path& path) {
    return std::filesystem::is_regular_file(path) && access(path.c_str(), X_OK) == 0;
}

// Runs `program script` in `dir` with its output in the log; the exit status.
int run_in_dir(const std::string& program, const std::string& dir, const std::string& script,
               const std::string& log_file) {
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (chdir(dir.c_str()) != 0) _exit(126);
        const int log = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (log >= 0) {
            dup2(log, STDOUT_FILENO);
            dup2(log, STDERR_FILENO);
        }
        execl(program.c_str(), program.c_str(), script.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string last_lines(const std::string& path, size_t n_lines) {
    std::ifstream file(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(file, line);) lines.push_back(line);
    std::string out;
    for (size_t i = lines.size() > n_lines ? lines.size() - n_lines : 0; i < lines.size(); ++i) {
        out += (out.empty() ? "" : " | ") + lines[i];
    }
    return out;
}

}  // namespace

std::optional<std::string> find_gnuplot() {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path != nullptr ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        const std::filesystem::path candidate = std::filesystem::path(dir) / "gnuplot";
        if (is_executable(candidate)) return candidate.string();
    }
    return std::nullopt;
}

void prepare_plot_dir(const std::string& dir, const std::string& program,
                      const std::string& still_written) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error || !std::filesystem::is_directory(dir)) {
        util::fail("--plot: cannot create the folder {}", dir);
    }
    if (!find_gnuplot()) {
        fmt::print(stderr,
                   "{}: gnuplot is not installed (Debian: apt-get install gnuplot-nox): no charts "
                   "will be drawn; {} still written\n",
                   program, still_written);
    }
}

std::string run_gnuplot(const std::string& dir, const std::string& script,
                        const std::string& log) {
    const std::optional<std::string> gnuplot = find_gnuplot();
    if (!gnuplot) {
        return "gnuplot is not installed (Debian: apt-get install gnuplot-nox), so no charts "
               "were drawn";
    }
    const int status = run_in_dir(*gnuplot, dir, script, log);
    if (status == 0) return {};
    return fmt::format("gnuplot failed (status {}): {}", status,
                       last_lines((std::filesystem::path(dir) / log).string(), 3));
}

std::string chart_data(const std::vector<BenchSummary>& levels) {
    std::vector<const BenchSummary*> sorted;
    for (const BenchSummary& level : levels) sorted.push_back(&level);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
        return concurrency_of(*a) < concurrency_of(*b);
    });
    std::string out =
        "# concurrency output_tps total_tps requests_per_s ttft_p50_ms ttft_p90_ms ttft_p99_ms "
        "tpot_p50_ms tpot_p90_ms tpot_p99_ms e2el_p50_ms e2el_p99_ms user_tps label\n";
    for (const BenchSummary* s : sorted) {
        const double user_speed = s->tpot_ms.median > 0.0 ? 1000.0 / s->tpot_ms.median : 0.0;
        const std::string label = s->max_concurrency > 0
                                      ? fmt::format("c={}", s->max_concurrency)
                                      // Not "~": gnuplot's enhanced text overprints with it.
                                      : fmt::format("c={:.1f} mean", s->mean_concurrency);
        out += fmt::format(
            "{:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} "
            "{:.4f} {:.4f} {:.4f} \"{}\"\n",
            concurrency_of(*s), s->output_throughput, s->total_token_throughput,
            s->request_throughput, s->ttft_ms.median, s->ttft_ms.p90, s->ttft_ms.p99,
            s->tpot_ms.median, s->tpot_ms.p90, s->tpot_ms.p99, s->e2el_ms.median, s->e2el_ms.p99,
            user_speed, label);
    }
    return out;
}

std::string chart_script(bool sweep) {
    std::string out = fmt::format(
        "# Written by `ladder bench --plot`; run `gnuplot {}` here to draw the charts again.\n"
        "D = '{}'\n"
        "png_terminal = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? "
        "'pngcairo size 960,600 font \"sans,11\"' : 'png size 960,600'\n",
        kScriptFile, kDataFile);
    for (const Chart& chart : kCharts) {
        out += fmt::format(
            "\nreset\nset title '{}'\nset grid\nset key top left box opaque\n"
            "set offsets graph 0.05, graph 0.05, graph 0.1, 0\n"
            // Rates and latencies read truer from zero.
            "set yrange [0:*]\n{}{}"
            "set terminal @png_terminal\nset output '{}.png'\n{}\n"
            "set terminal svg size 960,600 dynamic font 'sans,11' background rgb 'white'\n"
            "set output '{}.svg'\nreplot\nunset output\n",
            chart.title, chart.settings,
            // A sweep doubles its levels: a log axis spaces them evenly.
            sweep && std::string(chart.name) == "throughput_vs_concurrency" ? "set logscale x 2\n"
                                                                            : "set xrange [0:*]\n",
            chart.name, chart.plot, chart.name);
    }
    return out;
}

PlotOutcome draw_charts(const std::string& dir, const std::vector<BenchSummary>& levels) {
    PlotOutcome outcome;
    if (!find_gnuplot()) {
        outcome.problem = run_gnuplot(dir, kScriptFile, kLogFile);
        return outcome;
    }
    const std::filesystem::path folder(dir);
    std::ofstream(folder / kDataFile) << chart_data(levels);
    std::ofstream(folder / kScriptFile) << chart_script(levels.size() > 1);
    outcome.problem = run_gnuplot(dir, kScriptFile, kLogFile);
    if (!outcome.problem.empty()) return outcome;
    for (const Chart& chart : kCharts) {
        if (std::filesystem::exists(folder / (std::string(chart.name) + ".png")) &&
            std::filesystem::exists(folder / (std::string(chart.name) + ".svg"))) {
            outcome.charts.push_back(chart.name);
        }
    }
    return outcome;
}

}  // namespace ladder::tools
