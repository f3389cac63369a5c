#include "ladder/tools/sim_session.h"

#include <fmt/format.h>
#include <chrono>
#include <iostream>

#include "ladder/tools/bench_json.h"
#include "ladder/tools/bench_report.h"
#include "ladder/tools/bench_session.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

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

void check_config(const SimulateConfig& config) {
    const SimulationOptions& options = config.simulation;
    if (!(options.request_rate > 0.0)) {
        util::fail("--request-rate must be positive or inf, not {}", options.request_rate);
    }
    if (options.max_concurrency < 0) util::fail("--max-concurrency must not be negative");
    if (options.n_replicas < 1) util::fail("--replicas must be at least 1");
    if (options.replica.max_num_seqs < 1) util::fail("--max-num-seqs must be at least 1");
    if (options.replica.max_num_batched_tokens < 1)
        util::fail("--max-num-batched-tokens must be at least 1");
    if (options.replica.max_num_batched_tokens < options.replica.max_num_seqs) {
        // As the engine refuses it: a step must hold every running decode.
        util::fail("--max-num-batched-tokens ({}) must be at least --max-num-seqs ({})",
                   options.replica.max_num_batched_tokens, options.replica.max_num_seqs);
    }
    if (!(options.balance_factor >= 1.0)) util::fail("--balance-factor must be at least 1");
}

double share(int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

nlohmann::json simulation_json(const SimulationResult& result, const BenchSummary& summary,
                               const BenchInfo& info, const SimulateConfig& config) {
    nlohmann::json json = bench_result_json(result.run, summary, info);
    const SimulationOptions& options = config.simulation;
    json["simulated"] = {
        {"profile", profile_json(options.profile)},
        {"replicas", options.n_replicas},
        {"router", router_name(options.router)},
        {"max_num_seqs", options.replica.max_num_seqs},
        {"max_num_batched_tokens", options.replica.max_num_batched_tokens},
        {"prefix_caching", options.replica.prefix_caching},
        {"num_steps", result.n_steps},
        {"num_preemptions", result.n_preemptions},
        {"peak_kv_blocks", result.peak_used_blocks},
        {"kv_blocks", result.n_kv_blocks},
        {"peak_kv_usage", share(result.peak_used_blocks, result.n_kv_blocks)},
        {"prefix_cache_queried_tokens", result.n_prefix_queried_tokens},
        {"prefix_cache_hit_tokens", result.n_prefix_hit_tokens},
        {"prefix_cache_hit_share",
         share(result.n_prefix_hit_tokens, result.n_prefix_queried_tokens)},
    };
    return json;
}

void run_simulation(const SimulateConfig& config) {
    check_config(config);
    const SimulationOptions& options = config.simulation;
    std::cout << format_profile(options.profile) << '\n' << std::flush;
    const std::vector<BenchPrompt> prompts = make_dataset(config.dataset);
    const std::vector<SimRequest> requests = simulated_requests(prompts, options);
    const auto wall_start = std::chrono::steady_clock::now();
    const SimulationResult result = simulate(requests, options);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

    BenchInfo info;
    info.base_url = fmt::format("simulated: {} replica(s), {}", options.n_replicas,
                                router_name(options.router));
    info.model = options.profile.source;
    info.endpoint = config.dataset.endpoint == BenchEndpoint::Chat ? "chat" : "completions";
    info.dataset = describe_dataset(config.dataset);
    info.n_prompts = config.dataset.n_prompts;
    info.seed = config.dataset.seed;
    info.slo = config.summary.slo;
    info.gpu_hour_cost = config.summary.gpu_hour_cost;
    SummaryOptions summary_options = config.summary;
    // The cost is the whole fleet's: every replica's GPUs.
    summary_options.gpus_per_replica = options.profile.gpus_per_replica * options.n_replicas;
    const BenchSummary summary = summarize(result.run, summary_options);
    std::cout << format_summary(summary, info);
    std::cout << fmt::format(
        "Simulated: {} replica(s) ({}), {} steps, {} preemptions, peak KV use {}/{} blocks "
        "({:.1f}%), prefix cache hit share {:.1f}%, {:.1f} s simulated in {:.2f} s\n",
        options.n_replicas, router_name(options.router), result.n_steps, result.n_preemptions,
        result.peak_used_blocks, result.n_kv_blocks,
        100.0 * share(result.peak_used_blocks, result.n_kv_blocks),
        100.0 * share(result.n_prefix_hit_tokens, result.n_prefix_queried_tokens),
        result.run.duration_s, wall_s);
    if (summary.n_failed > 0) {
        fmt::print(stderr, "ladder simulate: {} of {} requests failed:\n{}", summary.n_failed,
                   result.run.results.size(), format_errors(result.run, 5));
    }
    std::cout << std::flush;
    if (!config.json_path.empty()) {
        write_json_file(config.json_path, simulation_json(result, summary, info, config));
    }
}

}  // namespace ladder::tools
