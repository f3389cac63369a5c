#include "ladder/tools/sim_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "ladder/tools/bench_json.h"
#include "ladder/tools/bench_report.h"
#include "ladder/tools/bench_session.h"
#include "ladder/tools/sim_plot.h"
#include "ladder/tools/sim_replica_search.h"
#include "ladder/tools/sim_workload.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using Clock = std::chrono::steady_clock;

const char* router_name(RouterKind kind) {
    switch (kind) {
        case RouterKind::RoundRobin:
            return "round-robin";
        case RouterKind::LeastLoaded:
            return "least-loaded";
        case RouterKind::PrefixAffinity:
            return "prefix-affinity";
    }
    return "?";
}

void check_tier(const SimulationOptions& options, const KvTierOptions& tier, const char* size_flag,
                const char* bandwidth_flag, const char* latency_flag) {
    if (tier.capacity_bytes < 0) util::fail("{} must not be negative", size_flag);
    if (!(tier.bytes_per_s > 0.0) || !std::isfinite(tier.bytes_per_s)) {
        util::fail("{} must be positive", bandwidth_flag);
    }
    if (latency_flag && !(tier.latency_s >= 0.0 && std::isfinite(tier.latency_s))) {
        util::fail("{} must not be negative", latency_flag);
    }
    if (tier.capacity_bytes == 0) return;
    if (!options.replica.prefix_caching) {
        util::fail("{} needs the prefix cache (it is off: --no-prefix-cache)", size_flag);
    }
    if (!(options.profile.kv_bytes_per_token > 0.0)) {
        util::fail(
            "{} needs the profile's kv_bytes_per_token (a profile from ladder simulate "
            "calibrate or --device/--preset has it)",
            size_flag);
    }
}

void check_config(const SimulateConfig& config) {
    const SimulationOptions& options = config.simulation;
    if (!(options.arrivals.request_rate > 0.0)) {
        util::fail("--request-rate must be positive or inf, not {}", options.arrivals.request_rate);
    }
    check_arrival_options(options.arrivals);
    if (options.max_concurrency < 0) util::fail("--max-concurrency must not be negative");
    if (options.disaggregated()) {
        if (options.n_prefill_replicas < 1 || options.n_decode_replicas < 1) {
            util::fail("give both --prefill-replicas and --decode-replicas, each at least 1");
        }
    } else if (options.n_replicas < 1) {
        util::fail("--replicas must be at least 1");
    }
    if (options.replica.max_num_seqs < 1) util::fail("--max-num-seqs must be at least 1");
    if (options.replica.max_num_batched_tokens < 1)
        util::fail("--max-num-batched-tokens must be at least 1");
    if (options.replica.max_num_batched_tokens < options.replica.max_num_seqs) {
        // As the engine refuses it: a step must hold every running decode.
        util::fail("--max-num-batched-tokens ({}) must be at least --max-num-seqs ({})",
                   options.replica.max_num_batched_tokens, options.replica.max_num_seqs);
    }
    if (!(options.balance_factor >= 1.0)) util::fail("--balance-factor must be at least 1");
    check_tier(options, options.replica.disk, "--kv-disk-cache-size", "--kv-disk-gbps", nullptr);
    check_tier(options, options.replica.remote, "--kv-remote-size", "--kv-remote-gbps",
               "--kv-remote-latency-ms");
    if (config.dataset.n_prompts < 1) util::fail("--num-prompts must be at least 1");
    if (!config.sweep_request_rates.empty()) {
        for (const double rate : config.sweep_request_rates) {
            if (!(rate > 0.0)) util::fail("--sweep-request-rate: each rate must be positive");
        }
        if (config.find_min_replicas || !config.json_path.empty() || !config.replay_path.empty()) {
            util::fail("--sweep-request-rate takes neither --find-min-replicas, --json nor --replay");
        }
    }
    if (config.summary.gpu_hour_cost && !(*config.summary.gpu_hour_cost >= 0.0)) {
        util::fail("--gpu-hour-cost must not be negative");
    }
    if (config.find_min_replicas) {
        if (!config.summary.slo.any()) {
            util::fail("--find-min-replicas needs --slo-ttft-ms or --slo-tpot-ms");
        }
        if (!(config.slo_attainment > 0.0 && config.slo_attainment <= 1.0)) {
            util::fail("--slo-attainment must be in (0, 1], not {}", config.slo_attainment);
        }
    }
}

double share(int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Hits served by memory itself: the rest were read from the tiers below.
int64_t memory_hit_tokens(const SimulationResult& result) {
    return std::max<int64_t>(
        0, result.n_prefix_hit_tokens - result.n_disk_hit_tokens - result.n_remote_hit_tokens);
}

// Non-blank lines of a trace, at most `limit`: the run's size before it runs.
int64_t count_trace_requests(const std::string& path, int64_t limit) {
    std::ifstream file(path);
    if (!file) util::fail("cannot read the trace {}", path);
    int64_t n = 0;
    std::string line;
    while (n < limit && std::getline(file, line)) {
        if (line.find_first_not_of(" \t\r") != std::string::npos) ++n;
    }
    return n;
}

struct Workload {
    std::unique_ptr<RequestStream> stream;
    int64_t n_requests = 0;
};

Workload make_workload(const SimulateConfig& config) {
    const DatasetOptions& dataset = config.dataset;
    const ArrivalOptions& arrivals = config.simulation.arrivals;
    if (!config.replay_path.empty()) {
        const int64_t limit = config.n_prompts_given ? dataset.n_prompts : INT64_MAX;
        Workload workload{
            std::make_unique<TraceRequests>(
                config.replay_path,
                config.n_prompts_given ? std::optional(dataset.n_prompts) : std::nullopt,
                dataset.seed),
            count_trace_requests(config.replay_path, limit)};
        return workload;
    }
    if (dataset.kind == "random" || dataset.kind == "prefix") {
        return {std::make_unique<SyntheticRequests>(dataset, arrivals), dataset.n_prompts};
    }
    std::vector<BenchPrompt> prompts = make_dataset(dataset);
    const auto n = static_cast<int64_t>(prompts.size());
    return {std::make_unique<PromptRequests>(std::move(prompts), arrivals, dataset.seed), n};
}

// The line on stderr while it runs: simulated time, requests done, wall
// time; rewritten in place on a terminal, a line every 10 s into a file.
class SimulationProgressLine {
public:
    SimulationProgressLine(bool enabled, int64_t n_total)
        : enabled_(enabled), terminal_(isatty(STDERR_FILENO) != 0), n_total_(n_total) {}

    void update(double simulated_s, int64_t n_done, bool last = false) {
        if (!enabled_) return;
        const double wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
        const double interval = terminal_ ? 0.25 : 10.0;
        if (!last && wall_s - last_print_s_ < interval) return;
        last_print_s_ = wall_s;
        const std::string text =
            fmt::format("simulate: {}/{} requests done, {:.1f} s simulated in {:.1f} s", n_done,
                        n_total_, simulated_s, wall_s);
        fmt::print(stderr, "{}{}{}", terminal_ ? "\r\033[K" : "", text,
                   terminal_ && !last ? "" : "\n");
        std::fflush(stderr);
    }

private:
    bool enabled_;
    bool terminal_;
    int64_t n_total_;
    Clock::time_point start_ = Clock::now();
    double last_print_s_ = 0.0;
};

}  // namespace

namespace {

// "4 replica(s), round-robin" or "2 prefill + 6 decode replicas (disaggregated, round-robin)".
std::string fleet_description(const SimulationOptions& options) {
    if (options.disaggregated()) {
        return fmt::format("{} prefill + {} decode replicas (disaggregated, {})",
                           options.n_prefill_replicas, options.n_decode_replicas,
                           router_name(options.router));
    }
    return fmt::format("{} replica(s), {}", options.n_replicas, router_name(options.router));
}

// Each fleet --find-min-replicas ran, in the order it ran them, with the
// shares meeting the SLOs (each SLO's alone null when it was not given).
nlohmann::json replicas_tried_json(std::span<const ReplicasTried> tried, const LatencySlo& slo) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ReplicasTried& row : tried) {
        const bool split = row.n_prefill_replicas > 0;
        rows.push_back({
            {"replicas", row.n_replicas},
            {"prefill_replicas", split ? nlohmann::json(row.n_prefill_replicas) : nullptr},
            {"decode_replicas", split ? nlohmann::json(row.n_decode_replicas) : nullptr},
            {"slo_attainment", row.shares.both},
            {"ttft_attainment", slo.ttft_ms ? nlohmann::json(row.shares.ttft) : nullptr},
            {"tpot_attainment", slo.tpot_ms ? nlohmann::json(row.shares.tpot) : nullptr},
        });
    }
    return rows;
}

}  // namespace

nlohmann::json simulation_json(const SimulationResult& result, const BenchSummary& summary,
                               const BenchInfo& info, const SimulateConfig& config,
                               std::span<const ReplicasTried> tried) {
    const bool recorded = !result.run.results.empty();
    nlohmann::json json =
        recorded ? bench_result_json(result.run, summary, info) : bench_summary_json(summary, info);
    const SimulationOptions& options = config.simulation;
    json["simulated"] = {
        {"profile", profile_json(options.profile)},
        {"mode", options.disaggregated() ? "disaggregated" : "colocated"},
        {"replicas", options.n_fleet_replicas()},
        {"prefill_replicas", options.disaggregated() ? nlohmann::json(options.n_prefill_replicas)
                                                     : nlohmann::json(nullptr)},
        {"decode_replicas", options.disaggregated() ? nlohmann::json(options.n_decode_replicas)
                                                    : nlohmann::json(nullptr)},
        {"kv_link_gbps", options.disaggregated()
                             ? nlohmann::json(options.kv_link_bytes_per_s * 8.0 / 1e9)
                             : nlohmann::json(nullptr)},
        {"kv_transfers", result.n_kv_transfers},
        {"kv_transfer_bytes", result.kv_transfer_bytes},
        {"kv_transfer_s", result.kv_transfer_s},
        {"router", router_name(options.router)},
        {"max_num_seqs", options.replica.max_num_seqs},
        {"max_num_batched_tokens", options.replica.max_num_batched_tokens},
        {"prefix_caching", options.replica.prefix_caching},
        {"diurnal_amplitude", options.arrivals.diurnal_amplitude},
        {"diurnal_period_s", options.arrivals.diurnal_period_s},
        {"trace",
         config.replay_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(config.replay_path)},
        {"per_request_arrays", recorded},
        {"num_steps", result.n_steps},
        {"num_preemptions", result.n_preemptions},
        {"peak_kv_blocks", result.peak_used_blocks},
        {"kv_blocks", result.n_kv_blocks},
        {"peak_kv_usage", share(result.peak_used_blocks, result.n_kv_blocks)},
        {"prefix_cache_queried_tokens", result.n_prefix_queried_tokens},
        {"prefix_cache_hit_tokens", result.n_prefix_hit_tokens},
        {"prefix_cache_hit_share",
         share(result.n_prefix_hit_tokens, result.n_prefix_queried_tokens)},
        {"kv_disk_cache_size", options.replica.disk.capacity_bytes},
        {"kv_remote_size", options.replica.remote.capacity_bytes},
        {"kv_disk_hits", result.n_disk_hit_tokens},
        {"kv_remote_hits", result.n_remote_hit_tokens},
        {"prefix_cache_hit_share_by_tier",
         {{"memory", share(memory_hit_tokens(result), result.n_prefix_queried_tokens)},
          {"disk", share(result.n_disk_hit_tokens, result.n_prefix_queried_tokens)},
          {"remote", share(result.n_remote_hit_tokens, result.n_prefix_queried_tokens)}}},
        {"gpus", options.n_fleet_replicas() * options.profile.gpus_per_replica},
        {"cost_per_day",
         config.summary.gpu_hour_cost
             ? nlohmann::json(options.n_fleet_replicas() * options.profile.gpus_per_replica *
                              *config.summary.gpu_hour_cost * 24.0)
             : nlohmann::json(nullptr)},
        {"find_min_replicas", config.find_min_replicas},
        {"slo_attainment", config.find_min_replicas ? nlohmann::json(config.slo_attainment)
                                                    : nlohmann::json(nullptr)},
        {"replicas_tried", config.find_min_replicas ? replicas_tried_json(tried, config.summary.slo)
                                                    : nlohmann::json(nullptr)},
    };
    return json;
}

namespace {

// One quiet run of `options`: the shares of requests meeting the SLOs, one
// line on stderr saying them.
SloShares shares_on(const SimulateConfig& config, const SimulationOptions& options) {
    Workload workload = make_workload(config);
    SloCounter counter(config.summary.slo);
    simulate(*workload.stream, counter, options);
    const SloShares shares = counter.shares();
    const LatencySlo& slo = config.summary.slo;
    fmt::print(stderr, "simulate: {}: {:.2f}% of requests meet the SLOs{}{}\n",
               fleet_description(options), 100.0 * shares.both,
               slo.ttft_ms && slo.tpot_ms ? fmt::format(" (TTFT {:.2f}%, TPOT {:.2f}%)",
                                                        100.0 * shares.ttft, 100.0 * shares.tpot)
                                          : "",
               shares.both >= config.slo_attainment ? "" : ", short");
    return shares;
}

// The search for the fewest replicas (sim_replica_search.h): colocated, or
// the prefill and decode counts of a split, from the given counts up to
// --max-replicas in all. Returns the options of the fleet found.
SimulationOptions search_fleet(const SimulateConfig& config, std::vector<ReplicasTried>& tried) {
    const ReplicaSearchLimits limits{config.slo_attainment, config.max_replicas};
    SimulationOptions options = config.simulation;
    if (options.disaggregated()) {
        const ReplicaSplit split = search_min_split(
            [&](int32_t n_prefill, int32_t n_decode) {
                options.n_prefill_replicas = n_prefill;
                options.n_decode_replicas = n_decode;
                return shares_on(config, options);
            },
            {config.simulation.n_prefill_replicas, config.simulation.n_decode_replicas}, limits,
            tried);
        options.n_prefill_replicas = split.n_prefill;
        options.n_decode_replicas = split.n_decode;
    } else {
        options.n_replicas = search_min_replicas(
            [&](int32_t n_replicas) {
                options.n_replicas = n_replicas;
                return shares_on(config, options);
            },
            config.simulation.n_replicas, limits, tried);
    }
    return options;
}

// One run's report (bench's summary, the simulation's lines, the JSON); its summary.
BenchSummary report_run(const SimulateConfig& config, std::span<const ReplicasTried> tried) {
    const SimulationOptions& options = config.simulation;
    Workload workload = make_workload(config);
    const bool record = workload.n_requests <= kMaxRecordedRequests;

    SummaryOptions summary_options = config.summary;
    // The cost is the whole fleet's: every replica's GPUs.
    summary_options.gpus_per_replica = options.profile.gpus_per_replica * options.n_fleet_replicas();
    RunRecorder recorder;
    StreamingSummary streaming(summary_options);
    RequestSink& sink = record ? static_cast<RequestSink&>(recorder) : streaming;
    SimulationProgressLine progress_line(config.show_progress, workload.n_requests);
    const auto wall_start = Clock::now();
    SimulationResult result = simulate(
        *workload.stream, sink, options, false,
        [&](double simulated_s, int64_t n_done) { progress_line.update(simulated_s, n_done); });
    const double wall_s = std::chrono::duration<double>(Clock::now() - wall_start).count();
    progress_line.update(result.duration_s, result.n_requests, true);

    BenchSummary summary;
    if (record) {
        result.run = std::move(recorder.run());
        result.run.results.resize(static_cast<size_t>(result.n_requests));
        result.run.duration_s = result.duration_s;
        result.run.max_concurrency = options.max_concurrency;
        result.run.request_rate = options.arrivals.request_rate;
        summary = summarize(result.run, summary_options);
    } else {
        summary = streaming.summary(result.duration_s, options.max_concurrency,
                                    options.arrivals.request_rate);
    }

    BenchInfo info;
    info.base_url = "simulated: " + fleet_description(options);
    info.model = options.profile.source;
    info.endpoint = config.dataset.endpoint == BenchEndpoint::Chat ? "chat" : "completions";
    info.dataset = config.replay_path.empty() ? describe_dataset(config.dataset)
                                              : "trace " + config.replay_path;
    info.n_prompts = result.n_requests;
    info.seed = config.dataset.seed;
    info.slo = config.summary.slo;
    info.gpu_hour_cost = config.summary.gpu_hour_cost;
    info.burstiness = options.arrivals.burstiness;
    std::cout << format_summary(summary, info);
    std::cout << fmt::format(
        "Simulated: {}, {} steps, {} preemptions, peak KV use {}/{} blocks "
        "({:.1f}%), prefix cache hit share {:.1f}%, {:.1f} s simulated in {:.2f} s\n",
        fleet_description(options), result.n_steps, result.n_preemptions,
        result.peak_used_blocks, result.n_kv_blocks,
        100.0 * share(result.peak_used_blocks, result.n_kv_blocks),
        100.0 * share(result.n_prefix_hit_tokens, result.n_prefix_queried_tokens),
        result.duration_s, wall_s);
    if (options.replica.disk.capacity_bytes > 0 || options.replica.remote.capacity_bytes > 0) {
        const int64_t queried = result.n_prefix_queried_tokens;
        std::cout << fmt::format(
            "Prefix cache hits by tier: memory {:.1f}%, disk {:.1f}%, remote {:.1f}% of prompt "
            "tokens ({} read from disk, {} from remote)\n",
            100.0 * share(memory_hit_tokens(result), queried),
            100.0 * share(result.n_disk_hit_tokens, queried),
            100.0 * share(result.n_remote_hit_tokens, queried), result.n_disk_hit_tokens,
            result.n_remote_hit_tokens);
    }
    if (options.disaggregated()) {
        std::cout << fmt::format(
            "KV transfers: {} prompts, {:.3g} GB over {:g} Gbit/s links, {:.3g} s of link time "
            "({:.2f} ms a transfer)\n",
            result.n_kv_transfers, result.kv_transfer_bytes / 1e9,
            options.kv_link_bytes_per_s * 8.0 / 1e9, result.kv_transfer_s,
            result.n_kv_transfers > 0 ? 1e3 * result.kv_transfer_s / result.n_kv_transfers : 0.0);
    }
    if (config.summary.gpu_hour_cost) {
        const int32_t n_gpus = options.n_fleet_replicas() * options.profile.gpus_per_replica;
        std::cout << fmt::format("Fleet cost: {} GPUs x ${:.2f}/GPU-hour = ${:.0f} a day\n", n_gpus,
                                 *config.summary.gpu_hour_cost,
                                 n_gpus * *config.summary.gpu_hour_cost * 24.0);
    }
    if (!record) {
        std::cout << fmt::format(
            "Summarised as it ran ({} requests, over {}): percentiles within 0.05%, no "
            "per-request arrays in --json\n",
            result.n_requests, kMaxRecordedRequests);
    }
    if (summary.n_failed > 0) {
        fmt::print(stderr, "ladder simulate: {} of {} requests failed{}", summary.n_failed,
                   result.n_requests,
                   record ? ":\n" + format_errors(result.run, 5)
                          : fmt::format(", the first: {}\n", streaming.first_error()));
    }
    std::cout << std::flush;
    if (!config.json_path.empty()) {
        write_json_file(config.json_path, simulation_json(result, summary, info, config, tried));
    }
    return summary;
}

}  // namespace

void run_simulation(const SimulateConfig& given) {
    check_config(given);
    if (!given.plot_dir.empty()) {
        prepare_plot_dir(given.plot_dir, "ladder simulate", "the report is");
    }
    std::cout << format_profile(given.simulation.profile) << '\n' << std::flush;
    SimulateConfig config = given;
    std::vector<ReplicasTried> tried;
    if (config.find_min_replicas) {
        config.simulation = search_fleet(config, tried);
        const SimulationOptions& found = config.simulation;
        std::cout << fmt::format(
            "Fewest replicas meeting the SLOs for {:.1f}% of requests: {}{} ({} GPUs)\n",
            100.0 * config.slo_attainment, found.n_fleet_replicas(),
            found.disaggregated() ? fmt::format(" ({} prefill + {} decode)",
                                                found.n_prefill_replicas, found.n_decode_replicas)
                                  : "",
            found.n_fleet_replicas() * found.profile.gpus_per_replica);
    }
    std::vector<BenchSummary> levels;
    if (config.sweep_request_rates.empty()) {
        levels.push_back(report_run(config, tried));
    } else {
        for (const double rate : config.sweep_request_rates) {
            config.simulation.arrivals.request_rate = rate;
            std::cout << fmt::format("\n=== request rate {:g}/s ===\n", rate);
            levels.push_back(report_run(config, tried));
        }
    }
    if (config.plot_dir.empty()) return;
    const PlotOutcome outcome =
        draw_simulation_charts(config.plot_dir, levels, tried, config.slo_attainment);
    if (!outcome.problem.empty()) fmt::print(stderr, "ladder simulate: {}\n", outcome.problem);
    fmt::print(stderr, "ladder simulate: {} chart(s) in {}\n", outcome.charts.size(),
               config.plot_dir);
}

}  // namespace ladder::tools
