// Cost arithmetic. Prices are dollars per million tokens throughout, as
// providers quote them.
#include "ladder/tools/cost.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr double kMillion = 1e6;
constexpr double kSecondsPerHour = 3600.0;

void require_non_negative(double value, const char* flag) {
    if (!std::isfinite(value) || value < 0.0) {
        util::fail("{} must be a non-negative number, not {}", flag, value);
    }
}

void require_positive(double value, const char* flag) {
    if (!std::isfinite(value) || value <= 0.0)
        util::fail("{} must be positive, not {}", flag, value);
}

void require_count(int64_t value, const char* flag) {
    if (value < 0) util::fail("{} must be a non-negative count, not {}", flag, value);
}

}  // namespace

HostedCost hosted_cost(const HostedPrices& prices, const HostedTraffic& traffic) {
    require_non_negative(prices.input, "--price-input");
    require_non_negative(prices.output, "--price-output");
    require_non_negative(prices.cached_input, "--price-cached-input");
    const double write_price = prices.cache_write.value_or(prices.input);
    require_non_negative(write_price, "--price-cache-write");
    const RequestShape& shape = traffic.shape;
    require_count(shape.prefix_tokens, "--prefix-tokens");
    require_count(shape.input_tokens, "--input-tokens");
    require_count(shape.output_tokens, "--output-tokens");
    if (traffic.n_requests < 1)
        util::fail("--requests must be at least 1, not {}", traffic.n_requests);
    if (traffic.n_cache_writes < 0 || traffic.n_cache_writes > traffic.n_requests) {
        util::fail("--cache-writes must be between 0 and --requests ({}), not {}",
                   traffic.n_requests, traffic.n_cache_writes);
    }

    const auto n = static_cast<double>(traffic.n_requests);
    const auto writes = static_cast<double>(traffic.n_cache_writes);
    const auto prefix = static_cast<double>(shape.prefix_tokens);
    // What every request pays either way: its own input and its output.
    const double own = static_cast<double>(shape.input_tokens) * prices.input +
                       static_cast<double>(shape.output_tokens) * prices.output;

    HostedCost cost;
    cost.cost_without_cache = n * (prefix * prices.input + own) / kMillion;
    cost.cost_with_cache =
        (writes * prefix * write_price + (n - writes) * prefix * prices.cached_input + n * own) /
        kMillion;
    cost.saving = cost.cost_without_cache - cost.cost_with_cache;
    cost.saving_fraction =
        cost.cost_without_cache > 0.0 ? cost.saving / cost.cost_without_cache : 0.0;
    cost.cost_per_request_without_cache = cost.cost_without_cache / n;
    cost.cost_per_request_with_cache = cost.cost_with_cache / n;
    return cost;
}

SelfHostedCost self_hosted_cost(const SelfHostedSetup& setup) {
    require_non_negative(setup.gpu_hour_cost, "--gpu-hour-cost");
    if (setup.tokens_per_second) require_positive(*setup.tokens_per_second, "--tokens-per-second");
    if (setup.total_tokens_per_second) {
        require_positive(*setup.total_tokens_per_second, "total_token_throughput");
    }
    if (setup.gpus_per_replica < 1) {
        util::fail("--gpus-per-replica must be at least 1, not {}", setup.gpus_per_replica);
    }
    require_count(setup.fleet_gpus, "--fleet-gpus");
    require_positive(setup.hours, "--hours");
    if (!setup.tokens_per_second && setup.fleet_gpus == 0) {
        util::fail("self-hosted cost needs --tokens-per-second, --from-bench or --fleet-gpus");
    }

    const double replica_hour_cost = setup.gpu_hour_cost * setup.gpus_per_replica;
    const auto per_million = [&](double tokens_per_second) {
        return replica_hour_cost / (tokens_per_second * kSecondsPerHour) * kMillion;
    };
    SelfHostedCost cost;
    if (setup.tokens_per_second)
        cost.cost_per_million_tokens = per_million(*setup.tokens_per_second);
    if (setup.total_tokens_per_second) {
        cost.cost_per_million_total_tokens = per_million(*setup.total_tokens_per_second);
    }
    if (setup.fleet_gpus > 0) {
        const auto gpus = static_cast<double>(setup.fleet_gpus);
        cost.fleet_cost = gpus * setup.hours * setup.gpu_hour_cost;
        if (setup.tokens_per_second) {
            cost.fleet_tokens = gpus / setup.gpus_per_replica * *setup.tokens_per_second *
                                setup.hours * kSecondsPerHour;
        }
    }
    return cost;
}

BenchThroughput parse_bench_result(std::string_view json_text, const std::string& name) {
    const nlohmann::json result = nlohmann::json::parse(json_text, nullptr, false);
    if (result.is_discarded() || !result.is_object()) {
        util::fail("{}: not a JSON object (expected a saved bench result)", name);
    }
    const auto number = [&](const char* key) -> std::optional<double> {
        const auto it = result.find(key);
        if (it == result.end() || it->is_null()) return std::nullopt;
        if (!it->is_number()) util::fail("{}: '{}' is not a number", name, key);
        const double value = it->get<double>();
        if (!(std::isfinite(value) && value > 0.0)) {
            util::fail("{}: '{}' must be positive, not {}", name, key, value);
        }
        return value;
    };
    const auto output = number("output_throughput");
    if (!output) {
        util::fail("{}: no 'output_throughput' (expected vLLM's `bench serve --save-result` keys)",
                   name);
    }
    return BenchThroughput{*output, number("total_token_throughput")};
}

BenchThroughput read_bench_result(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) util::fail("cannot read '{}'", path);
    std::ostringstream text;
    text << in.rdbuf();
    return parse_bench_result(text.str(), path);
}

}  // namespace ladder::tools
