#include "ladder/tools/bench_session.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_endpoint.h"
#include "ladder/tools/bench_html.h"
#include "ladder/tools/bench_json.h"
#include "ladder/tools/bench_plot.h"
#include "ladder/tools/bench_report.h"
#include "ladder/tools/bench_runner.h"
#include "ladder/tools/bench_spec_decode.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr size_t kErrorLinesShown = 5;

std::string local_date() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
    return text;
}

void check_config(const BenchConfig& config) {
    if (!(config.request_rate > 0.0)) {
        util::fail("--request-rate must be positive or inf, not {}", config.request_rate);
    }
    if (config.max_concurrency < 0) util::fail("--max-concurrency must not be negative");
    ArrivalOptions arrivals;
    arrivals.burstiness = config.burstiness;
    check_arrival_options(arrivals);
    if (!config.sweep_concurrency.empty() && config.max_concurrency > 0) {
        util::fail("give --max-concurrency or --sweep-concurrency, not both");
    }
    for (const int64_t level : config.sweep_concurrency) {
        if (level < 1) util::fail("--sweep-concurrency levels must be at least 1, not {}", level);
    }
    if (!(config.timeout_s > 0.0)) util::fail("--timeout must be positive");
    const LatencySlo& slo = config.summary.slo;
    if ((slo.ttft_ms && !(*slo.ttft_ms > 0.0)) || (slo.tpot_ms && !(*slo.tpot_ms > 0.0))) {
        util::fail("--slo-ttft-ms and --slo-tpot-ms must be positive");
    }
    if (config.summary.gpu_hour_cost && !(*config.summary.gpu_hour_cost >= 0.0)) {
        util::fail("--gpu-hour-cost must not be negative");
    }
    if (config.summary.gpus_per_replica < 1) util::fail("--gpus-per-replica must be at least 1");
}

void write_plots(const BenchConfig& config, HtmlReport report) {
    const PlotOutcome outcome = draw_charts(config.plot_dir, report.levels);
    if (!outcome.problem.empty()) fmt::print(stderr, "ladder bench: {}\n", outcome.problem);
    report.charts = outcome.charts;
    report.charts_problem = outcome.problem;
    const std::filesystem::path page = std::filesystem::path(config.plot_dir) / "report.html";
    std::ofstream file(page);
    file << render_html_report(report, config.plot_dir);
    if (!file) util::fail("cannot write {}", page.string());
    fmt::print(stderr, "ladder bench: {} chart(s) and report.html in {}\n", outcome.charts.size(),
               config.plot_dir);
}

}  // namespace

std::string describe_dataset(const DatasetOptions& options) {
    const auto len = [](const std::optional<int64_t>& given, int64_t fallback) {
        return given.value_or(fallback);
    };
    std::string ratio =
        options.range_ratio > 0.0 ? fmt::format(", range ratio {}", options.range_ratio) : "";
    if (options.kind == "random") {
        return fmt::format("random (input {}, output {}{})", len(options.input_len, 1024),
                           len(options.output_len, 128), ratio);
    }
    if (options.kind == "prefix") {
        const std::string blocks =
            options.n_prefixes > 1 ? fmt::format(" x {} blocks", options.n_prefixes) : "";
        return fmt::format("prefix (shared {}{}, input {}, output {}{})", options.prefix_len,
                           blocks, len(options.input_len, 200), len(options.output_len, 300),
                           ratio);
    }
    return options.kind + " " + options.path;
}

void run_bench(const BenchConfig& config) {
    check_config(config);
    const BaseUrl url = parse_base_url(config.base_url);
    // Every level's prompts first: a bad dataset fails before any request.
    const std::vector<int64_t> levels = config.sweep_concurrency.empty()
                                            ? std::vector<int64_t>{config.max_concurrency}
                                            : config.sweep_concurrency;
    std::vector<std::vector<BenchPrompt>> level_prompts;
    for (size_t i = 0; i < levels.size(); ++i) {
        DatasetOptions options = config.dataset;
        // Fresh prompts per level, so the prefix cache does not carry one
        // level's prompts into the next.
        options.seed += i;
        level_prompts.push_back(make_dataset(options));
    }
    if (!config.plot_dir.empty()) {
        prepare_plot_dir(config.plot_dir, "ladder bench",
                         fmt::format("the JSON and {}/report.html are", config.plot_dir));
    }

    BenchTarget target;
    target.url = url;
    target.api_key = config.api_key;
    target.endpoint = config.dataset.endpoint;
    target.timeout_s = config.timeout_s;
    target.sampling = config.sampling;
    target.model = probe_endpoint(url, config.api_key, config.model, config.timeout_s);

    BenchInfo info;
    info.base_url = config.base_url;
    info.model = target.model;
    info.endpoint = config.dataset.endpoint == BenchEndpoint::Chat ? "chat" : "completions";
    info.dataset = describe_dataset(config.dataset);
    info.n_prompts = config.dataset.n_prompts;
    info.seed = config.dataset.seed;
    info.date = local_date();
    info.slo = config.summary.slo;
    info.gpu_hour_cost = config.summary.gpu_hour_cost;
    info.burstiness = config.burstiness;
    info.sampling = config.sampling;

    HtmlReport report;
    std::vector<nlohmann::json> level_json;
    int64_t n_completed = 0;
    std::string first_error;
    for (size_t i = 0; i < levels.size(); ++i) {
        LoadOptions load;
        load.request_rate = config.request_rate;
        load.burstiness = config.burstiness;
        load.max_concurrency = levels[i];
        load.seed = config.dataset.seed + i;
        load.show_progress = config.show_progress;
        if (!config.sweep_concurrency.empty())
            load.label = fmt::format("concurrency {}", levels[i]);
        const std::optional<engine::SpecDecodeStats> spec_before =
            fetch_spec_decode_metrics(url, config.api_key, config.timeout_s);
        const BenchRun run = run_load(target, level_prompts[i], load);
        BenchSummary summary = summarize(run, config.summary);
        const std::optional<engine::SpecDecodeStats> spec_after =
            fetch_spec_decode_metrics(url, config.api_key, config.timeout_s);
        if (spec_before && spec_after) summary.spec_decode = difference(*spec_after, *spec_before);
        std::cout << format_summary(summary, info) << std::flush;
        if (summary.n_failed > 0) {
            const std::string errors = format_errors(run, kErrorLinesShown);
            fmt::print(stderr, "ladder bench: {} of {} requests failed:\n{}", summary.n_failed,
                       run.results.size(), errors);
            report.errors += errors;
            for (const RequestResult& result : run.results) {
                if (first_error.empty()) first_error = result.error;
            }
        }
        n_completed += summary.n_completed;
        report.levels.push_back(summary);
        level_json.push_back(bench_result_json(run, summary, info));
    }
    if (levels.size() > 1) std::cout << '\n' << format_sweep_table(report.levels) << std::flush;
    if (!config.json_path.empty()) {
        write_json_file(config.json_path,
                        levels.size() > 1 ? sweep_result_json(level_json) : level_json.front());
    }
    if (!config.plot_dir.empty()) {
        report.info = info;
        write_plots(config, std::move(report));
    }
    if (n_completed == 0) util::fail("every request failed; the first: {}", first_error);
}

}  // namespace ladder::tools
