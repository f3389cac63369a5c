// cost's arithmetic against the worked examples: the DeepSeek support bot
// with and without its cached block, a GPU fleet's daily bill, and reading
// vLLM's saved bench results.
#include "ladder/tools/cost.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ladder/tools/price_presets.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

// The support bot: a 3,000-token cached block, 200 tokens of question, 300 of answer.
HostedTraffic support_bot(int64_t n_cache_writes) {
    return HostedTraffic{RequestShape{3000, 200, 300}, 1000, n_cache_writes};
}

TEST(HostedCost, deepseek_r1_support_bot_costs_about_half_with_the_block_cached) {
    const HostedPrices prices = find_price_preset("deepseek-r1").prices;
    EXPECT_DOUBLE_EQ(prices.input, 0.55);
    EXPECT_DOUBLE_EQ(prices.output, 2.19);
    EXPECT_DOUBLE_EQ(prices.cached_input, 0.14);

    // Every request reads the cache: 1000 × (3000 × 0.14 + 200 × 0.55 + 300 × 2.19) / 1e6.
    const HostedCost all_hits = hosted_cost(prices, support_bot(0));
    EXPECT_NEAR(all_hits.cost_without_cache, 1000 * (3200 * 0.55 + 300 * 2.19) / 1e6, 1e-12);
    EXPECT_NEAR(all_hits.cost_without_cache, 2.417, 1e-9);
    EXPECT_NEAR(all_hits.cost_with_cache, 1.187, 1e-9);
    EXPECT_NEAR(all_hits.saving, 1.230, 1e-9);
    const double ratio = all_hits.cost_with_cache / all_hits.cost_without_cache;
    EXPECT_GT(ratio, 0.45);
    EXPECT_LT(ratio, 0.55) << "about half";

    // The first request writes the block at the uncached price.
    const HostedCost first_writes = hosted_cost(prices, support_bot(1));
    EXPECT_NEAR(first_writes.cost_with_cache, 1.187 + 3000 * (0.55 - 0.14) / 1e6, 1e-9);
    EXPECT_NEAR(first_writes.cost_per_request_with_cache, first_writes.cost_with_cache / 1000,
                1e-15);
    EXPECT_NEAR(first_writes.saving_fraction, first_writes.saving / first_writes.cost_without_cache,
                1e-15);
}

TEST(HostedCost, cache_write_price_applies_to_writes_only) {
    HostedPrices prices{3.0, 15.0, 0.30, 3.75};  // Anthropic-style write surcharge
    const HostedCost cost = hosted_cost(prices, HostedTraffic{RequestShape{1000, 0, 0}, 10, 2});
    EXPECT_NEAR(cost.cost_with_cache, (2 * 1000 * 3.75 + 8 * 1000 * 0.30) / 1e6, 1e-15);
    EXPECT_NEAR(cost.cost_without_cache, 10 * 1000 * 3.0 / 1e6, 1e-15);
    // Writing on every request costs more than not caching.
    EXPECT_LT(hosted_cost(prices, HostedTraffic{RequestShape{1000, 0, 0}, 10, 10}).saving, 0.0);
}

TEST(HostedCost, one_request_saves_nothing) {
    const HostedPrices prices = find_price_preset("deepseek-r1").prices;
    const HostedCost cost = hosted_cost(prices, HostedTraffic{RequestShape{3000, 200, 300}, 1, 1});
    EXPECT_DOUBLE_EQ(cost.saving, 0.0);
}

TEST(HostedCost, bad_input_is_an_input_error) {
    const HostedPrices ok{1.0, 2.0, 0.5, std::nullopt};
    EXPECT_THROW(hosted_cost(HostedPrices{-1.0, 2.0, 0.5, std::nullopt}, support_bot(1)),
                 util::InputError);
    EXPECT_THROW(hosted_cost(ok, HostedTraffic{RequestShape{-1, 0, 0}, 10, 1}), util::InputError);
    EXPECT_THROW(hosted_cost(ok, HostedTraffic{RequestShape{1, 0, 0}, 0, 0}), util::InputError);
    EXPECT_THROW(hosted_cost(ok, HostedTraffic{RequestShape{1, 0, 0}, 10, 11}), util::InputError);
}

TEST(PricePresets, unknown_preset_lists_the_valid_ones) {
    try {
        find_price_preset("gpt-9");
        FAIL() << "unknown preset accepted";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("deepseek-r1"), std::string::npos) << error.what();
    }
}

TEST(SelfHostedCost, fleet_of_1800_gpus_for_a_day_at_2_dollars_is_about_87k) {
    SelfHostedSetup setup;
    setup.gpu_hour_cost = 2.0;
    setup.fleet_gpus = 1800;
    const SelfHostedCost cost = self_hosted_cost(setup);
    ASSERT_TRUE(cost.fleet_cost.has_value());
    EXPECT_DOUBLE_EQ(*cost.fleet_cost, 86'400.0);
    EXPECT_NEAR(*cost.fleet_cost, 87'000.0, 1'000.0);
    EXPECT_FALSE(cost.cost_per_million_tokens.has_value());
    EXPECT_FALSE(cost.fleet_tokens.has_value());
}

TEST(SelfHostedCost, cost_per_million_tokens_is_hourly_cost_over_hourly_tokens) {
    SelfHostedSetup setup;
    setup.gpu_hour_cost = 2.0;
    setup.tokens_per_second = 2500.0;  // 9 M tokens an hour
    EXPECT_NEAR(*self_hosted_cost(setup).cost_per_million_tokens, 2.0 / 9.0, 1e-12);
    setup.gpus_per_replica = 8;  // the same throughput from 8 GPUs costs 8 times as much
    EXPECT_NEAR(*self_hosted_cost(setup).cost_per_million_tokens, 16.0 / 9.0, 1e-12);
    setup.fleet_gpus = 80;  // 10 replicas for 24 h
    setup.hours = 24.0;
    EXPECT_NEAR(*self_hosted_cost(setup).fleet_tokens, 10 * 2500.0 * 24 * 3600, 1e-3);
}

TEST(SelfHostedCost, bad_input_is_an_input_error) {
    SelfHostedSetup setup;
    setup.gpu_hour_cost = 2.0;
    EXPECT_THROW(self_hosted_cost(setup), util::InputError);  // nothing to price
    setup.tokens_per_second = 0.0;
    EXPECT_THROW(self_hosted_cost(setup), util::InputError);
    setup.tokens_per_second = 100.0;
    setup.gpu_hour_cost = -1.0;
    EXPECT_THROW(self_hosted_cost(setup), util::InputError);
    setup.gpu_hour_cost = 1.0;
    setup.fleet_gpus = -5;
    EXPECT_THROW(self_hosted_cost(setup), util::InputError);
}

TEST(BenchResult, reads_vllm_saved_result_keys) {
    // The shape `vllm bench serve --save-result` writes (abridged).
    const std::string vllm = R"({"duration": 61.2, "completed": 1000, "total_input_tokens": 215196,
        "total_output_tokens": 198343, "request_throughput": 16.3,
        "output_throughput": 3240.7, "total_token_throughput": 6756.9,
        "mean_ttft_ms": 105.2, "ttfts": [0.1, 0.2]})";
    const BenchThroughput throughput = parse_bench_result(vllm, "result.json");
    EXPECT_DOUBLE_EQ(throughput.output_tokens_per_second, 3240.7);
    ASSERT_TRUE(throughput.total_tokens_per_second.has_value());
    EXPECT_DOUBLE_EQ(*throughput.total_tokens_per_second, 6756.9);

    const auto dir = std::filesystem::temp_directory_path();
    const auto path = dir / "ladder_bench_result_test.json";
    std::ofstream(path) << vllm;
    EXPECT_DOUBLE_EQ(read_bench_result(path.string()).output_tokens_per_second, 3240.7);
    std::filesystem::remove(path);
}

TEST(BenchResult, rejects_files_that_are_not_bench_results) {
    EXPECT_THROW(parse_bench_result("not json", "x"), util::InputError);
    EXPECT_THROW(parse_bench_result("[1, 2]", "x"), util::InputError);
    EXPECT_THROW(parse_bench_result(R"({"total_token_throughput": 5})", "x"), util::InputError);
    EXPECT_THROW(parse_bench_result(R"({"output_throughput": "fast"})", "x"), util::InputError);
    EXPECT_THROW(parse_bench_result(R"({"output_throughput": -3})", "x"), util::InputError);
    EXPECT_THROW(read_bench_result("/nonexistent/result.json"), util::InputError);
    // total_token_throughput is optional.
    EXPECT_FALSE(parse_bench_result(R"({"output_throughput": 5})", "x").total_tokens_per_second);
}

}  // namespace
}  // namespace ladder::tools
