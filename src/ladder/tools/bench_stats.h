// `ladder bench`'s formulas: percentiles as numpy computes them, time per
// output token, goodput under latency SLOs. Pure functions on numbers; the
// HTTP side and the report know nothing of how they are computed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace ladder::tools {

// numpy.percentile's default ("linear"): on the sorted values, position
// q / 100 × (n − 1), interpolated between its two neighbours. q in [0, 100].
// Empty input gives 0, as vLLM's report does for a metric with no samples.
double percentile(std::span<const double> values, double q);
double mean_of(std::span<const double> values);
// Population standard deviation (numpy.std's default, ddof = 0).
double stddev_of(std::span<const double> values);

// TPOT = (E2E − TTFT) / (output tokens − 1): the mean gap between tokens
// after the first. None for fewer than two tokens, where it is undefined.
std::optional<double> time_per_output_token(double e2e_s, double ttft_s, int64_t n_output_tokens);

// Service-level objectives a request must meet to count towards goodput;
// an absent one is not checked.
struct LatencySlo {
    std::optional<double> ttft_ms;
    std::optional<double> tpot_ms;
    bool any() const { return ttft_ms.has_value() || tpot_ms.has_value(); }
};

// Whether one completed request meets the SLOs. A request of one token has
// no TPOT and meets any TPOT objective, as in vLLM (its TPOT counts as 0).
bool meets_slo(const LatencySlo& slo, double ttft_s, std::optional<double> tpot_s);

// Requests per second that met the SLOs: n_good / duration (0 for no time).
double goodput(int64_t n_good_requests, double duration_s);

// $ per million tokens from a GPU-hour price and a throughput, by
// `ladder cost`'s self-hosted formula: $/h ÷ (tokens/s × 3600) × 10^6.
double cost_per_million_tokens(double gpu_hour_cost, double tokens_per_second,
                               int32_t gpus_per_replica = 1);

}  // namespace ladder::tools
