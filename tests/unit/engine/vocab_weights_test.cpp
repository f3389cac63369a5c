// The sampler's vocabulary passes: the polynomial exp against libm's in
// double, the largest value, and the chunked running sums against a plain
// walk of the prefix sums.
#include "ladder/engine/vocab_weights.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace ladder::engine {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

TEST(ExpNonpositive, is_within_a_few_ulps_of_exp_over_its_range) {
    double worst = 0.0;
    // Every 1/1024 from 0 down to -87: the reduction's every interval.
    for (int i = 0; i <= 87 * 1024; ++i) {
        const float x = -static_cast<float>(i) / 1024.0f;
        const double exact = std::exp(static_cast<double>(x));
        worst = std::max(worst, std::abs(exp_nonpositive(x) - exact) / exact);
    }
    EXPECT_LT(worst, 3e-7);
    EXPECT_EQ(exp_nonpositive(0.0f), 1.0f);
    EXPECT_EQ(exp_nonpositive(-0.0f), 1.0f);
}

TEST(ExpNonpositive, is_zero_below_minus_87_and_at_minus_infinity) {
    EXPECT_GT(exp_nonpositive(-87.0f), 0.0f);
    EXPECT_EQ(exp_nonpositive(-87.01f), 0.0f);
    EXPECT_EQ(exp_nonpositive(-1e30f), 0.0f);
    EXPECT_EQ(exp_nonpositive(-kInfinity), 0.0f);
}

// exp_weights runs AVX2 where the CPU has it, SSE2 otherwise; either must
// give what one call at a time gives.
TEST(ExpNonpositive, the_vectorized_weights_give_the_scalar_bits) {
    std::mt19937 gen(5);
    std::vector<float> x(1001);
    for (float& v : x) v = static_cast<float>(gen() % 100000) / 1000.0f - 95.0f;
    x[7] = -kInfinity;
    const float max = 5.0f;
    const float temperature = 0.7f;
    std::vector<float> weights(x.size());
    exp_weights(
        std::span<const float>(x), [](float v) { return v; }, max, temperature, weights.data());
    for (size_t i = 0; i < x.size(); ++i) {
        // One at a time, through a volatile, so the compiler cannot vectorize it.
        volatile float one = (x[i] - max) / temperature;
        EXPECT_EQ(weights[i], exp_nonpositive(one)) << "x = " << x[i];
    }
}

TEST(MaxValue, finds_the_largest_in_any_lane_and_the_tail_and_skips_nan) {
    const auto identity = [](float v) { return v; };
    EXPECT_EQ(max_value(std::span<const float>(), identity), -kInfinity);
    for (size_t n : {1u, 7u, 8u, 9u, 31u}) {
        for (size_t at = 0; at < n; ++at) {
            std::vector<float> values(n, -3.0f);
            values[at] = 2.5f;
            if (at + 1 < n) values[at + 1] = std::numeric_limits<float>::quiet_NaN();
            EXPECT_EQ(max_value(std::span<const float>(values), identity), 2.5f)
                << "n " << n << ", largest at " << at;
        }
    }
}

// The first index whose prefix sum (taken in a plain walk) passes target.
size_t walk(const std::vector<float>& weights, double target) {
    double running = 0.0;
    for (size_t i = 0; i < weights.size(); ++i) {
        running += weights[i];
        if (target < running) return i;
    }
    return weights.size() - 1;
}

TEST(WeightSums, finds_what_a_walk_of_the_prefix_sums_finds) {
    std::mt19937 gen(11);
    // Several chunks and a ragged last one; runs of zero weight, whole zero
    // chunks among them.
    std::vector<float> weights(5 * WeightSums::kChunk + 37);
    for (size_t i = 0; i < weights.size(); ++i) {
        const bool zero =
            (i / 64) % 5 == 1 || (i >= 2 * WeightSums::kChunk && i < 3 * WeightSums::kChunk);
        weights[i] = zero ? 0.0f : static_cast<float>(gen() % 1000 + 1) / 1000.0f;
    }
    WeightSums sums;
    const double total = sums.assign(weights);
    double plain = 0.0;
    for (float w : weights) plain += w;
    EXPECT_NEAR(total, plain, 1e-9 * plain);
    EXPECT_EQ(sums.total(), total);
    for (int k = 0; k < 2000; ++k) {
        const double target = total * (static_cast<double>(k) + 0.5) / 2000.0;
        const size_t found = sums.find(weights, target);
        ASSERT_LT(found, weights.size());
        EXPECT_GT(weights[found], 0.0f) << "target " << target;
        EXPECT_EQ(found, walk(weights, target)) << "target " << target;
    }
    EXPECT_EQ(sums.find(weights, 0.0), 0u);
    // A target the sums fall short of by rounding: the last index with weight.
    EXPECT_EQ(sums.find(weights, total), weights.size() - 1);
}

TEST(WeightSums, an_empty_or_weightless_list_finds_index_zero) {
    WeightSums sums;
    const std::vector<float> none;
    EXPECT_EQ(sums.assign(none), 0.0);
    EXPECT_EQ(sums.find(none, 0.0), 0u);
    const std::vector<float> zeros(300, 0.0f);
    EXPECT_EQ(sums.assign(zeros), 0.0);
    EXPECT_EQ(sums.find(zeros, 0.0), 0u);
}

}  // namespace
}  // namespace ladder::engine
