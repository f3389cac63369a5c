#include "ladder/tools/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ladder/tools/cost.h"

namespace ladder::tools {

double percentile(std::span<const double> values, double q) {
    if (values.empty()) return 0.0;
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    const double position = q / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<size_t>(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(below);
    // numpy's form: exact at the ends, monotone in between.
    return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

double mean_of(std::span<const double> values) {
    if (values.empty()) return 0.0;
    double sum = 0.0;
    for (const double value : values) sum += value;
    return sum / static_cast<double>(values.size());
}

double stddev_of(std::span<const double> values) {
    if (values.empty()) return 0.0;
    const double mean = mean_of(values);
    double squares = 0.0;
    for (const double value : values) squares += (value - mean) * (value - mean);
    return std::sqrt(squares / static_cast<double>(values.size()));
}

std::optional<double> time_per_output_token(double e2e_s, double ttft_s, int64_t n_output_tokens) {
    if (n_output_tokens < 2) return std::nullopt;
    return (e2e_s - ttft_s) / static_cast<double>(n_output_tokens - 1);
}

bool meets_slo(const LatencySlo& slo, double ttft_s, std::optional<double> tpot_s) {
    if (slo.ttft_ms && ttft_s * 1000.0 > *slo.ttft_ms) return false;
    if (slo.tpot_ms && tpot_s.value_or(0.0) * 1000.0 > *slo.tpot_ms) return false;
    return true;
}

double goodput(int64_t n_good_requests, double duration_s) {
    if (duration_s <= 0.0) return 0.0;
    return static_cast<double>(n_good_requests) / duration_s;
}

double cost_per_million_tokens(double gpu_hour_cost, double tokens_per_second,
                               int32_t gpus_per_replica) {
    SelfHostedSetup setup;
    setup.gpu_hour_cost = gpu_hour_cost;
    setup.tokens_per_second = tokens_per_second;
    setup.gpus_per_replica = gpus_per_replica;
    return *self_hosted_cost(setup).cost_per_million_tokens;
}

}  // namespace ladder::tools
