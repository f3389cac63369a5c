// `ladder cost`: what traffic costs on a hosted API (with and without a cached
// prefix) or on GPUs you rent. Parses flags, asks tools/cost, prints a short
// table or one JSON object.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ladder/cli/commands.h"
#include "ladder/tools/cost.h"
#include "ladder/tools/report_format.h"
#include "ladder/util/error.h"

namespace ladder::cli {

namespace {

using nlohmann::json;

struct CostOptions {
    // Hosted.
    std::string preset;
    double price_input = 0.0;
    double price_output = 0.0;
    double price_cached_input = 0.0;
    double price_cache_write = 0.0;
    tools::HostedTraffic traffic;
    // Self-hosted.
    double gpu_hour_cost = 0.0;
    double tokens_per_second = 0.0;
    std::string from_bench;
    int32_t gpus_per_replica = 1;
    int64_t fleet_gpus = 0;
    double hours = 24.0;
    bool json = false;
};

void print_row(const std::string& label, const std::string& value) {
    fmt::print("{:<14} {}\n", label, value);
}

tools::HostedPrices hosted_prices(const CLI::App& command, const CostOptions& options,
                                  std::string& label) {
    tools::HostedPrices prices;
    if (!options.preset.empty()) {
        const tools::PricePreset& preset = tools::find_price_preset(options.preset);
        prices = preset.prices;
        label = std::string(preset.description);
    } else if (command.count("--price-input") == 0 || command.count("--price-output") == 0) {
        util::fail("hosted pricing needs --price-input and --price-output, or --preset ({})",
                   tools::price_preset_names());
    }
    // Flags given with a preset override its prices.
    if (command.count("--price-input") > 0) prices.input = options.price_input;
    if (command.count("--price-output") > 0) prices.output = options.price_output;
    if (command.count("--price-cached-input") > 0) {
        prices.cached_input = options.price_cached_input;
    } else if (options.preset.empty()) {
        if (options.traffic.shape.prefix_tokens > 0) {
            util::fail("--price-cached-input is needed to price the cached prefix");
        }
        prices.cached_input = prices.input;
    }
    if (command.count("--price-cache-write") > 0) prices.cache_write = options.price_cache_write;
    return prices;
}

void run_hosted(const CLI::App& command, const CostOptions& options) {
    std::string label = "given prices";
    const tools::HostedPrices prices = hosted_prices(command, options, label);
    const tools::HostedCost cost = tools::hosted_cost(prices, options.traffic);
    const tools::RequestShape& shape = options.traffic.shape;
    const double write_price = prices.cache_write.value_or(prices.input);
    if (options.json) {
        const json out = {
            {"mode", "hosted"},
            {"prices",
             {{"input", prices.input},
              {"output", prices.output},
              {"cached_input", prices.cached_input},
              {"cache_write", write_price},
              {"source", label}}},
            {"prefix_tokens", shape.prefix_tokens},
            {"input_tokens", shape.input_tokens},
            {"output_tokens", shape.output_tokens},
            {"requests", options.traffic.n_requests},
            {"cache_writes", options.traffic.n_cache_writes},
            {"cost_without_cache", cost.cost_without_cache},
            {"cost_with_cache", cost.cost_with_cache},
            {"saving", cost.saving},
            {"saving_fraction", cost.saving_fraction},
            {"cost_per_request_without_cache", cost.cost_per_request_without_cache},
            {"cost_per_request_with_cache", cost.cost_per_request_with_cache},
        };
        std::cout << out.dump(2) << '\n';
        return;
    }
    print_row("prices", fmt::format("per million tokens: ${} input, ${} cached input, ${} output "
                                    "({})",
                                    prices.input, prices.cached_input, prices.output, label));
    print_row("request", fmt::format("{} prefix + {} input + {} output tokens",
                                     tools::with_commas(shape.prefix_tokens),
                                     tools::with_commas(shape.input_tokens),
                                     tools::with_commas(shape.output_tokens)));
    print_row("requests",
              fmt::format(
                  "{} ({} writing the prefix to the cache at ${} per million, the rest reading it)",
                  tools::with_commas(options.traffic.n_requests),
                  tools::with_commas(options.traffic.n_cache_writes), write_price));
    print_row("without cache",
              fmt::format("{}  ({} per request)", tools::format_dollars(cost.cost_without_cache),
                          tools::format_dollars(cost.cost_per_request_without_cache)));
    print_row("with cache",
              fmt::format("{}  ({} per request)", tools::format_dollars(cost.cost_with_cache),
                          tools::format_dollars(cost.cost_per_request_with_cache)));
    print_row("saving", fmt::format("{} ({:.1f}%)", tools::format_dollars(cost.saving),
                                    cost.saving_fraction * 100.0));
}

void run_self_hosted(const CLI::App& command, const CostOptions& options) {
    if (command.count("--gpu-hour-cost") == 0) util::fail("self-hosted cost needs --gpu-hour-cost");
    tools::SelfHostedSetup setup;
    setup.gpu_hour_cost = options.gpu_hour_cost;
    setup.gpus_per_replica = options.gpus_per_replica;
    setup.fleet_gpus = options.fleet_gpus;
    setup.hours = options.hours;
    std::string throughput_source = "given";
    if (!options.from_bench.empty()) {
        if (command.count("--tokens-per-second") > 0) {
            util::fail("give either --tokens-per-second or --from-bench, not both");
        }
        const tools::BenchThroughput bench = tools::read_bench_result(options.from_bench);
        setup.tokens_per_second = bench.output_tokens_per_second;
        setup.total_tokens_per_second = bench.total_tokens_per_second;
        throughput_source = "output tokens, from " + options.from_bench;
    } else if (command.count("--tokens-per-second") > 0) {
        setup.tokens_per_second = options.tokens_per_second;
    }
    const tools::SelfHostedCost cost = tools::self_hosted_cost(setup);
    const auto optional = [](const std::optional<double>& v) {
        return v ? json(*v) : json(nullptr);
    };
    if (options.json) {
        const json out = {
            {"mode", "self-hosted"},
            {"gpu_hour_cost", setup.gpu_hour_cost},
            {"gpus_per_replica", setup.gpus_per_replica},
            {"tokens_per_second", optional(setup.tokens_per_second)},
            {"total_tokens_per_second", optional(setup.total_tokens_per_second)},
            {"cost_per_million_tokens", optional(cost.cost_per_million_tokens)},
            {"cost_per_million_total_tokens", optional(cost.cost_per_million_total_tokens)},
            {"fleet_gpus", setup.fleet_gpus},
            {"hours", setup.hours},
            {"fleet_cost", optional(cost.fleet_cost)},
            {"fleet_tokens", optional(cost.fleet_tokens)},
        };
        std::cout << out.dump(2) << '\n';
        return;
    }
    print_row(
        "GPU",
        fmt::format("{} per GPU-hour, {} per replica", tools::format_dollars(setup.gpu_hour_cost),
                    setup.gpus_per_replica == 1 ? std::string("1 GPU")
                                                : fmt::format("{} GPUs", setup.gpus_per_replica)));
    if (setup.tokens_per_second) {
        print_row("throughput", fmt::format("{:.1f} tokens/s per replica ({})",
                                            *setup.tokens_per_second, throughput_source));
        print_row("cost", fmt::format("{} per million {}tokens",
                                      tools::format_dollars(*cost.cost_per_million_tokens),
                                      options.from_bench.empty() ? "" : "output "));
    }
    if (cost.cost_per_million_total_tokens) {
        print_row("", fmt::format("{} per million tokens in and out ({:.1f} tokens/s)",
                                  tools::format_dollars(*cost.cost_per_million_total_tokens),
                                  *setup.total_tokens_per_second));
    }
    if (cost.fleet_cost) {
        const std::string period =
            setup.hours == 24.0 ? "a day" : fmt::format("for {} h", setup.hours);
        print_row("fleet",
                  fmt::format("{} GPUs × {} h × {} = {} {}", tools::with_commas(setup.fleet_gpus),
                              setup.hours, tools::format_dollars(setup.gpu_hour_cost),
                              tools::format_dollars(*cost.fleet_cost), period));
        if (cost.fleet_tokens) {
            print_row("",
                      fmt::format("{} tokens {}",
                                  tools::with_commas(std::llround(*cost.fleet_tokens)), period));
        }
    }
}

void run_cost(const CLI::App& command, const CostOptions& options) {
    const bool hosted = !options.preset.empty() || command.count("--price-input") > 0 ||
                        command.count("--price-output") > 0 ||
                        command.count("--price-cached-input") > 0 ||
                        command.count("--price-cache-write") > 0;
    const bool self_hosted = command.count("--gpu-hour-cost") > 0 ||
                             command.count("--tokens-per-second") > 0 ||
                             !options.from_bench.empty() || command.count("--fleet-gpus") > 0;
    if (hosted && self_hosted) {
        util::fail(
            "price either a hosted API (--preset, --price-*) or self-hosted GPUs "
            "(--gpu-hour-cost ...), not both at once");
    }
    if (hosted) return run_hosted(command, options);
    if (self_hosted) return run_self_hosted(command, options);
    util::fail(
        "nothing to price: give hosted prices (--preset {} or --price-input, --price-output, "
        "--price-cached-input) or --gpu-hour-cost",
        tools::price_preset_names());
}

}  // namespace

void add_cost_command(CLI::App& app) {
    auto options = std::make_shared<CostOptions>();
    CLI::App* command = app.add_subcommand(
        "cost", "What traffic costs on a hosted API (with prefix caching) or on rented GPUs");
    command->add_option("--preset", options->preset,
                        "hosted prices of a known API: " + tools::price_preset_names());
    command->add_option("--price-input", options->price_input,
                        "$ per million uncached input tokens");
    command->add_option("--price-output", options->price_output, "$ per million output tokens");
    command->add_option("--price-cached-input", options->price_cached_input,
                        "$ per million input tokens read from the prompt cache");
    command->add_option("--price-cache-write", options->price_cache_write,
                        "$ per million input tokens written to the cache (default: --price-input)");
    command->add_option("--prefix-tokens", options->traffic.shape.prefix_tokens,
                        "tokens of the prefix every request shares (cacheable; default 0)");
    command->add_option("--input-tokens", options->traffic.shape.input_tokens,
                        "input tokens of each request after the prefix (default 0)");
    command->add_option("--output-tokens", options->traffic.shape.output_tokens,
                        "output tokens of each request (default 0)");
    command->add_option("--requests", options->traffic.n_requests,
                        "number of requests (default 1000)");
    command->add_option(
        "--cache-writes", options->traffic.n_cache_writes,
        "requests that write the prefix to the cache; the rest read it (default 1)");
    command->add_option("--gpu-hour-cost", options->gpu_hour_cost,
                        "$ per GPU per hour (self-hosted)");
    command->add_option("--tokens-per-second", options->tokens_per_second,
                        "throughput of one replica, tokens/s");
    command->add_option("--from-bench", options->from_bench,
                        "read throughput from a saved bench result (vLLM's output_throughput, "
                        "total_token_throughput)");
    command->add_option("--gpus-per-replica", options->gpus_per_replica,
                        "GPUs one replica runs on (default 1)");
    command->add_option("--fleet-gpus", options->fleet_gpus,
                        "GPUs in the fleet, for a fleet estimate");
    command->add_option("--hours", options->hours, "hours the fleet runs (default 24)");
    command->add_flag("--json", options->json, "print one JSON object");
    command->callback([options, command] { run_cost(*command, *options); });
}

}  // namespace ladder::cli
