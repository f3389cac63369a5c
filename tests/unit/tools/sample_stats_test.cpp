// Mean and sample standard deviation of repetitions, as llama-bench reports them.
#include "ladder/tools/sample_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ladder::tools {
namespace {

TEST(SampleStats, uses_the_sample_standard_deviation) {
    const std::vector<double> samples = {2, 4, 4, 4, 5, 5, 7, 9};
    const SampleStats stats = sample_stats(samples);
    EXPECT_DOUBLE_EQ(stats.mean, 5.0);
    // Squared deviations sum to 32 over 8 samples: n - 1 = 7, not 8.
    EXPECT_DOUBLE_EQ(stats.stddev, std::sqrt(32.0 / 7.0));
}

TEST(SampleStats, one_sample_has_no_spread_and_none_gives_zeros) {
    const std::vector<double> one = {3.5};
    EXPECT_DOUBLE_EQ(sample_stats(one).mean, 3.5);
    EXPECT_DOUBLE_EQ(sample_stats(one).stddev, 0.0);
    EXPECT_DOUBLE_EQ(sample_stats({}).mean, 0.0);
    EXPECT_DOUBLE_EQ(sample_stats({}).stddev, 0.0);
}

TEST(SampleStats, a_small_spread_around_a_large_mean_does_not_cancel) {
    // Nanosecond timings: sum(x^2) - n * mean^2 would lose these digits.
    const std::vector<double> samples = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    EXPECT_DOUBLE_EQ(sample_stats(samples).stddev, 1.0);
}

}  // namespace
}  // namespace ladder::tools
