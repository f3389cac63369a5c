// `ladder cost`'s arithmetic: the bill for traffic on a hosted API with and
// without a cached prompt prefix, and the cost per token of GPUs you rent.
// Pure functions; the one file read is a saved benchmark result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ladder/tools/price_presets.h"

namespace ladder::tools {

// One request: a prefix shared by every request (system prompt, documents)
// that the provider can cache, the request's own input, and its output.
struct RequestShape {
    int64_t prefix_tokens = 0;
    int64_t input_tokens = 0;
    int64_t output_tokens = 0;
};

struct HostedTraffic {
    RequestShape shape;
    int64_t n_requests = 1000;
    // Requests that write the prefix to the cache (the first, and again after
    // each expiry); the rest read it at the cached price.
    int64_t n_cache_writes = 1;
};

// Dollars.
struct HostedCost {
    double cost_without_cache = 0.0;
    double cost_with_cache = 0.0;
    double saving = 0.0;           // without - with
    double saving_fraction = 0.0;  // saving / without (0 when without is 0)
    double cost_per_request_without_cache = 0.0;
    double cost_per_request_with_cache = 0.0;
};

// without = N × ((prefix + input) × p_in + output × p_out) / 1e6
// with    = (W × prefix × p_write + (N - W) × prefix × p_cached
//            + N × (input × p_in + output × p_out)) / 1e6
// Throws util::InputError on negative or non-finite prices and counts, no
// requests, or more cache writes than requests.
HostedCost hosted_cost(const HostedPrices& prices, const HostedTraffic& traffic);

struct SelfHostedSetup {
    double gpu_hour_cost = 0.0;  // dollars per GPU per hour
    // Throughput of one replica, tokens per second (with --from-bench: its
    // output tokens; total_tokens_per_second counts input too).
    std::optional<double> tokens_per_second;
    std::optional<double> total_tokens_per_second;
    int32_t gpus_per_replica = 1;  // GPUs one replica runs on (its tensor parallelism)
    int64_t fleet_gpus = 0;        // 0: no fleet estimate
    double hours = 24.0;           // hours the fleet runs
};

struct SelfHostedCost {
    // gpus_per_replica × gpu_hour_cost / (tokens_per_second × 3600) × 1e6.
    std::optional<double> cost_per_million_tokens;
    std::optional<double> cost_per_million_total_tokens;
    // fleet_gpus × hours × gpu_hour_cost.
    std::optional<double> fleet_cost;
    // Tokens the fleet makes in those hours at tokens_per_second per replica.
    std::optional<double> fleet_tokens;
};

// Throws util::InputError on negative or non-finite numbers, zero
// throughput, and a setup with neither a throughput nor a fleet to price.
SelfHostedCost self_hosted_cost(const SelfHostedSetup& setup);

// Throughput from a saved benchmark result, read by vLLM's key names
// (`vllm bench serve --save-result`): output_throughput (required) and
// total_token_throughput, in tokens per second.
struct BenchThroughput {
    double output_tokens_per_second = 0.0;
    std::optional<double> total_tokens_per_second;
};
// `name` labels errors. Throws util::InputError when the text is not a JSON
// object with a positive output_throughput.
BenchThroughput parse_bench_result(std::string_view json_text, const std::string& name);
BenchThroughput read_bench_result(const std::string& path);

}  // namespace ladder::tools
