// `ladder bench`'s formulas: numpy's percentiles, TPOT, goodput, cost per
// million, Poisson arrivals, and a run's summary.
#include "ladder/tools/bench_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_metrics.h"

namespace ladder::tools {
namespace {

TEST(BenchStats, percentile_matches_numpy_linear_interpolation) {
    // numpy.percentile([15, 20, 35, 40, 50], q) for q = 0, 40, 50, 90, 100.
    const std::vector<double> values = {40, 15, 50, 35, 20};  // order does not matter
    EXPECT_DOUBLE_EQ(percentile(values, 0), 15.0);
    EXPECT_DOUBLE_EQ(percentile(values, 40), 29.0);
    EXPECT_DOUBLE_EQ(percentile(values, 50), 35.0);
    EXPECT_DOUBLE_EQ(percentile(values, 90), 46.0);
    EXPECT_DOUBLE_EQ(percentile(values, 100), 50.0);
    // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = [2.5, 3.7, 3.97].
    const std::vector<double> four = {1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(percentile(four, 50), 2.5);
    EXPECT_NEAR(percentile(four, 90), 3.7, 1e-12);
    EXPECT_NEAR(percentile(four, 99), 3.97, 1e-12);
    EXPECT_DOUBLE_EQ(percentile(std::vector<double>{7.0}, 99), 7.0);
    EXPECT_DOUBLE_EQ(percentile(std::vector<double>{}, 50), 0.0) << "no samples reads as 0";
}

TEST(BenchStats, mean_and_population_stddev_as_numpy) {
    const std::vector<double> values = {2, 4, 4, 4, 5, 5, 7, 9};
    EXPECT_DOUBLE_EQ(mean_of(values), 5.0);
    EXPECT_DOUBLE_EQ(stddev_of(values), 2.0);  // numpy.std, ddof = 0
    EXPECT_DOUBLE_EQ(mean_of(std::vector<double>{}), 0.0);
}

TEST(BenchStats, tpot_is_the_mean_gap_after_the_first_token) {
    // 9 tokens: the first at 0.2 s, the last at 1.0 s, 8 gaps between.
    EXPECT_NEAR(*time_per_output_token(1.0, 0.2, 9), 0.1, 1e-12);
    EXPECT_FALSE(time_per_output_token(1.0, 0.2, 1).has_value()) << "undefined for one token";
    EXPECT_FALSE(time_per_output_token(1.0, 0.2, 0).has_value());
}

TEST(BenchStats, goodput_counts_requests_meeting_every_slo) {
    const LatencySlo both{200.0, 50.0};
    EXPECT_TRUE(meets_slo(both, 0.150, 0.040));
    EXPECT_TRUE(meets_slo(both, 0.200, 0.050)) << "the objective itself meets it";
    EXPECT_FALSE(meets_slo(both, 0.201, 0.040));
    EXPECT_FALSE(meets_slo(both, 0.150, 0.051));
    EXPECT_TRUE(meets_slo(both, 0.150, std::nullopt)) << "one token: no TPOT to miss";
    EXPECT_TRUE(meets_slo(LatencySlo{}, 99.0, 99.0)) << "no objectives: every request is good";
    EXPECT_TRUE(meets_slo(LatencySlo{std::nullopt, 50.0}, 99.0, 0.01));
    EXPECT_DOUBLE_EQ(goodput(3, 1.5), 2.0);
    EXPECT_DOUBLE_EQ(goodput(3, 0.0), 0.0);
}

TEST(BenchStats, cost_per_million_is_dollars_per_hour_over_tokens_per_hour) {
    // $2/h at 1,000 tok/s: 3.6 M tokens an hour, $0.5556 per million.
    EXPECT_NEAR(cost_per_million_tokens(2.0, 1000.0), 2.0 / 3.6, 1e-12);
    EXPECT_NEAR(cost_per_million_tokens(2.0, 1000.0, 8), 8 * 2.0 / 3.6, 1e-12);
}

TEST(BenchArrivals, poisson_arrivals_have_the_asked_mean_rate) {
    const std::vector<double> times = arrival_times(20000, 5.0, 42);
    ASSERT_EQ(times.size(), 20000u);
    EXPECT_EQ(times.front(), 0.0);
    for (size_t i = 1; i < times.size(); ++i) ASSERT_GE(times[i], times[i - 1]);
    const double rate = static_cast<double>(times.size() - 1) / times.back();
    EXPECT_NEAR(rate, 5.0, 0.15) << "20,000 exponential gaps average within 3% of 1/5 s";
    // Exponential gaps: the standard deviation equals the mean.
    std::vector<double> gaps;
    for (size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
    EXPECT_NEAR(stddev_of(gaps) / mean_of(gaps), 1.0, 0.05);
    EXPECT_EQ(arrival_times(100, 5.0, 42), arrival_times(100, 5.0, 42)) << "same seed, same times";
    EXPECT_NE(arrival_times(100, 5.0, 42), arrival_times(100, 5.0, 43));
}

TEST(BenchArrivals, an_infinite_rate_sends_everything_at_once) {
    EXPECT_EQ(arrival_times(3, INFINITY, 0), (std::vector<double>{0, 0, 0}));
}

RequestResult completed(double ttft, double e2e, int64_t tokens, int64_t prompt, int64_t cached) {
    RequestResult result;
    result.success = true;
    result.ttft_s = ttft;
    result.e2e_s = e2e;
    result.n_stream_tokens = tokens;
    result.usage_completion_tokens = tokens;
    result.usage_prompt_tokens = prompt;
    result.usage_cached_tokens = cached;
    const double gap = tokens > 1 ? (e2e - ttft) / static_cast<double>(tokens - 1) : 0.0;
    for (int64_t i = 1; i < tokens; ++i) result.itls_s.push_back(gap);
    return result;
}

TEST(BenchMetrics, summary_has_throughputs_goodput_cached_share_and_cost) {
    BenchRun run;
    run.duration_s = 2.0;
    run.max_concurrency = 4;
    run.results = {completed(0.1, 1.0, 10, 100, 0), completed(0.3, 1.2, 10, 100, 64)};
    RequestResult failed;
    failed.error = "HTTP 500: boom";
    run.results.push_back(failed);
    RequestResult merged = completed(0.1, 0.5, 5, 50, 0);
    merged.n_stream_tokens = 4;  // one chunk carried two tokens
    run.results.push_back(merged);

    SummaryOptions options;
    options.slo = LatencySlo{200.0, std::nullopt};
    options.gpu_hour_cost = 3.6;
    const BenchSummary s = summarize(run, options);
    EXPECT_EQ(s.n_completed, 3);
    EXPECT_EQ(s.n_failed, 1);
    EXPECT_EQ(s.total_input_tokens, 250);
    EXPECT_EQ(s.total_output_tokens, 25) << "output tokens come from usage";
    EXPECT_DOUBLE_EQ(s.request_throughput, 1.5);
    EXPECT_DOUBLE_EQ(s.output_throughput, 12.5);
    EXPECT_DOUBLE_EQ(s.total_token_throughput, 137.5);
    EXPECT_EQ(*s.n_good, 2) << "the request with a 300 ms TTFT misses the 200 ms objective";
    EXPECT_DOUBLE_EQ(*s.request_goodput, 1.0);
    EXPECT_DOUBLE_EQ(*s.cached_token_share, 64.0 / 250.0);
    EXPECT_EQ(s.n_usage_mismatches, 1);
    EXPECT_NEAR(s.ttft_ms.median, 100.0, 1e-9);
    EXPECT_NEAR(s.tpot_ms.mean, (100.0 + 100.0 + 100.0) / 3.0, 1e-9);
    EXPECT_NEAR(s.e2el_ms.p99, 1000.0 + 0.98 * 200.0, 1e-9);
    EXPECT_NEAR(s.mean_concurrency, (1.0 + 1.2 + 0.5) / 2.0, 1e-12);
    // $3.6/h at 12.5 tok/s: 45,000 tokens an hour.
    EXPECT_NEAR(*s.cost_per_million_output_tokens, 3.6 / 45000.0 * 1e6, 1e-9);
}

TEST(BenchMetrics, a_run_without_successes_has_no_cost_and_zero_latencies) {
    BenchRun run;
    run.duration_s = 1.0;
    run.results.resize(2);
    SummaryOptions options;
    options.gpu_hour_cost = 2.0;
    const BenchSummary s = summarize(run, options);
    EXPECT_EQ(s.n_failed, 2);
    EXPECT_FALSE(s.cost_per_million_output_tokens.has_value());
    EXPECT_FALSE(s.cached_token_share.has_value());
    EXPECT_EQ(s.ttft_ms.p99, 0.0);
}

}  // namespace
}  // namespace ladder::tools
