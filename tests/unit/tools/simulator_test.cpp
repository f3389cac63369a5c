// ladder simulate's event loop on cases small enough to work out by hand:
// the engine's scheduler decides every step, the profile prices it.
#include <gtest/gtest.h>

#include "ladder/tools/sim_profile.h"
#include "ladder/tools/sim_router.h"
#include "ladder/tools/sim_session.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/error.h"
#include "sim_test_requests.h"

namespace ladder::tools {
namespace simulator_test {

using sim_test::iota_tokens;
using sim_test::step_tokens;

// 10 ms a step plus 1 ms a token; attention free unless a test says not.
SimulationOptions tiny_fleet(int64_t n_kv_blocks, int32_t budget, bool prefix_caching = true) {
    SimulationOptions options;
    options.profile.source = "test";
    options.profile.fixed_s = 0.010;
    options.profile.per_token_s = 0.001;
    options.profile.block_size = 4;
    options.profile.n_kv_blocks = n_kv_blocks;
    options.replica.max_num_batched_tokens = budget;
    options.replica.prefix_caching = prefix_caching;
    return options;
}

TEST(Simulator, OneRequestPrefillsThenDecodes) {
    SimulationOptions options = tiny_fleet(100, 512);
    options.profile.per_context_s = 1e-6;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 3}};
    const SimulationResult result = simulate(requests, options, true);
    ASSERT_EQ(step_tokens(result), (std::vector<int32_t>{8, 1, 1}));
    // The prompt's rows attend to 1 + 2 + ... + 8 positions, then 9, then 10.
    EXPECT_DOUBLE_EQ(result.steps[0].n_context, 36.0);
    EXPECT_DOUBLE_EQ(result.steps[1].n_context, 9.0);
    EXPECT_DOUBLE_EQ(result.steps[2].n_context, 10.0);
    const RequestResult& request = result.run.results[0];
    ASSERT_TRUE(request.success);
    EXPECT_NEAR(request.ttft_s, 0.018 + 36e-6, 1e-12);
    EXPECT_NEAR(request.e2e_s, 0.018 + 36e-6 + 0.011 + 9e-6 + 0.011 + 10e-6, 1e-12);
    ASSERT_EQ(request.itls_s.size(), 2u);
    EXPECT_NEAR(request.itls_s[0], 0.011 + 9e-6, 1e-12);
    EXPECT_EQ(request.output_tokens(), 3);
    EXPECT_EQ(result.n_preemptions, 0);
    EXPECT_EQ(result.peak_used_blocks, 3);  // positions 0..9 at the last step
}

// A decode row's context and the step's distinct KV positions, each with its
// own price: B arrives as A's prompt ends and finds A's two full blocks.
TEST(Simulator, DecodeRowsAndSharedBlocksArePricedApart) {
    SimulationOptions options = tiny_fleet(100, 512);
    options.profile.per_context_s = 1e-6;
    options.profile.per_decode_context_s = 2e-6;
    options.profile.per_kv_read_s = 4e-6;
    std::vector<int32_t> a = iota_tokens(8, 1);
    std::vector<int32_t> b = a;
    a.insert(a.end(), {100, 101});
    b.insert(b.end(), {200, 201});
    const std::vector<SimRequest> requests = {{0, 0.0, a, 3}, {1, 0.001, b, 2}};
    const SimulationResult result = simulate(requests, options, true);
    ASSERT_EQ(step_tokens(result), (std::vector<int32_t>{10, 3, 2}));
    const SimStep& second = result.steps[1];
    // A decodes at position 10 (11 positions); B's two rows attend 9 and 10.
    EXPECT_DOUBLE_EQ(second.n_context, 11.0 + 19.0);
    EXPECT_DOUBLE_EQ(second.n_decode_context, 11.0);
    // A's 11 positions, then only B's own block (2 positions): the shared two are read once.
    EXPECT_DOUBLE_EQ(second.n_kv_read, 13.0);
    const SimStep& third = result.steps[2];
    EXPECT_DOUBLE_EQ(third.n_decode_context, 12.0 + 11.0);
    EXPECT_DOUBLE_EQ(third.n_kv_read, 12.0 + 3.0);
    EXPECT_NEAR(second.end_s - second.start_s, 0.010 + 0.003 + 19e-6 + 22e-6 + 52e-6, 1e-12);
}

// A profile that does not price the KV read (a roofline's) leaves it uncounted.
TEST(Simulator, KvReadsAreCountedOnlyWhereSomethingReadsThem) {
    SimulationOptions options = tiny_fleet(100, 512);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2}};
    EXPECT_DOUBLE_EQ(simulate(requests, options, true).steps[1].n_kv_read, 0.0);
    options.replica.count_kv_reads = true;
    EXPECT_DOUBLE_EQ(simulate(requests, options, true).steps[1].n_kv_read, 9.0);
}

TEST(Simulator, ALogitRowCostsItsPartOnlyInTheStepsThatYieldATokenPerSequence) {
    SimulationOptions options = tiny_fleet(100, 6);
    options.profile.per_logit_row_s = 0.002;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2}};
    const SimulationResult result = simulate(requests, options, true);
    ASSERT_EQ(step_tokens(result), (std::vector<int32_t>{6, 2, 1}));
    // The first chunk yields no token: 10 + 6 ms; the last chunk one: 10 + 2 + 2 ms.
    EXPECT_NEAR(result.run.results[0].ttft_s, 0.016 + 0.014, 1e-12);
    EXPECT_NEAR(result.run.results[0].e2e_s, 0.016 + 0.014 + 0.013, 1e-12);
}

TEST(Simulator, TwoRequestsShareTheTokenBudget) {
    const SimulationOptions options = tiny_fleet(100, 6);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2},
                                              {1, 0.0, iota_tokens(8, 101), 2}};
    const SimulationResult result = simulate(requests, options, true);
    // A's first chunk takes the budget; A finishes its prompt and B starts
    // beside it; A's decode goes before B's last chunk; B decodes alone.
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{6, 6, 5, 1}));
    // A token comes from each chunk that reaches its sequence's end.
    std::vector<int32_t> logit_rows;
    for (const SimStep& step : result.steps) logit_rows.push_back(step.n_logit_rows);
    EXPECT_EQ(logit_rows, (std::vector<int32_t>{0, 1, 2, 1}));
    const RequestResult& a = result.run.results[0];
    const RequestResult& b = result.run.results[1];
    EXPECT_NEAR(a.ttft_s, 0.032, 1e-12);
    EXPECT_NEAR(a.e2e_s, 0.047, 1e-12);
    EXPECT_NEAR(b.ttft_s, 0.047, 1e-12);
    EXPECT_NEAR(b.e2e_s, 0.058, 1e-12);
    EXPECT_NEAR(result.run.duration_s, 0.058, 1e-12);
}

TEST(Simulator, ShortMemoryPreemptsTheNewestAndRecomputesIt) {
    // Three blocks of 4: both 4-token prompts fit, but the second decode
    // needs a fourth block, so B is preempted and waits for A to finish.
    const SimulationOptions options = tiny_fleet(3, 512, false);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(4, 1), 5},
                                              {1, 0.0, iota_tokens(4, 101), 5}};
    const SimulationResult result = simulate(requests, options, true);
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{8, 1, 1, 1, 1, 5, 1, 1, 1}));
    EXPECT_EQ(result.n_preemptions, 1);
    EXPECT_EQ(result.steps[1].n_preempted, 1);
    // Counted as each step runs: A's two blocks once B's went back.
    EXPECT_EQ(result.peak_used_blocks, 2);
    const RequestResult& b = result.run.results[1];
    ASSERT_TRUE(b.success);
    EXPECT_EQ(b.output_tokens(), 5);  // the token before the preemption is kept
    ASSERT_EQ(b.itls_s.size(), 4u);
    // From its first token (end of step 1) to its second (end of step 6,
    // the recomputation of its 4 prompt tokens and 1 output).
    EXPECT_NEAR(b.itls_s[0], 4 * 0.011 + 0.015, 1e-12);
}

TEST(Simulator, LaterPromptHitsThePrefixCache) {
    const SimulationOptions options = tiny_fleet(100, 512);
    std::vector<int32_t> first = iota_tokens(8, 1);
    std::vector<int32_t> second = first;
    first.insert(first.end(), {100, 101});
    second.insert(second.end(), {200, 201});
    const std::vector<SimRequest> requests = {{0, 0.0, first, 1}, {1, 1.0, second, 1}};
    const SimulationResult result = simulate(requests, options, true);
    // The second computes only what follows the two shared blocks.
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{10, 2}));
    EXPECT_EQ(result.run.results[1].usage_cached_tokens, 8);
    EXPECT_EQ(result.n_prefix_hit_tokens, 8);
    EXPECT_EQ(result.n_prefix_queried_tokens, 20);
    EXPECT_NEAR(result.run.results[1].ttft_s, 0.012, 1e-12);
}

TEST(Simulator, MaxConcurrencyHoldsRequestsBack) {
    SimulationOptions options = tiny_fleet(100, 512);
    options.max_concurrency = 1;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 1},
                                              {1, 0.0, iota_tokens(8, 101), 1}};
    const SimulationResult result = simulate(requests, options, true);
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{8, 8}));
    // Sent when the first finished; TTFT counts from the send, as bench's.
    EXPECT_NEAR(result.run.results[1].start_s, 0.018, 1e-12);
    EXPECT_NEAR(result.run.results[1].ttft_s, 0.018, 1e-12);
}

TEST(Simulator, ReplicasRunSideBySide) {
    SimulationOptions options = tiny_fleet(100, 512);
    options.n_replicas = 2;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 1},
                                              {1, 0.0, iota_tokens(8, 101), 1}};
    const SimulationResult result = simulate(requests, options, true);
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{8, 8}));
    EXPECT_NEAR(result.run.results[1].ttft_s, 0.018, 1e-12);  // not behind the first
}

TEST(Simulator, RequestLargerThanTheCacheFailsAlone) {
    const SimulationOptions options = tiny_fleet(2, 512);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 4},
                                              {1, 0.0, iota_tokens(4, 1), 2}};
    const SimulationResult result = simulate(requests, options);
    EXPECT_FALSE(result.run.results[0].success);
    EXPECT_NE(result.run.results[0].error.find("KV cache"), std::string::npos);
    EXPECT_TRUE(result.run.results[1].success);
}

TEST(Simulator, RefusedLastArrivalStillStartsTheOthers) {
    const SimulationOptions options = tiny_fleet(2, 512);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(4, 1), 2},
                                              {1, 0.0, iota_tokens(8, 1), 4}};
    const SimulationResult result = simulate(requests, options);
    EXPECT_TRUE(result.run.results[0].success);
    EXPECT_FALSE(result.run.results[1].success);
}

TEST(Router, PrefixAffinityKeepsAPrefixTogetherUnderItsBound) {
    Router router(RouterKind::PrefixAffinity, 1.25, 4);
    const std::vector<int32_t> prompt = {1, 2, 3, 4, 5};
    std::vector<int64_t> loads = {4, 4, 4, 4};
    const size_t home = router.pick(prompt, loads);
    EXPECT_EQ(router.pick(std::vector<int32_t>{1, 2, 3, 4, 9}, loads), home);  // same first 4
    // 16 in flight: a replica may hold ceil(1.25 x 17 / 4) = 6 with this one.
    loads[home] = 5;
    EXPECT_EQ(router.pick(prompt, loads), home);
    loads[home] = 6;
    EXPECT_EQ(router.pick(prompt, loads), (home + 1) % 4);
}

TEST(Router, LeastLoadedAndRoundRobin) {
    Router least(RouterKind::LeastLoaded);
    EXPECT_EQ(least.pick({}, std::vector<int64_t>{3, 1, 2}), 1u);
    Router round(RouterKind::RoundRobin);
    const std::vector<int64_t> loads = {0, 0, 0};
    EXPECT_EQ(round.pick({}, loads), 0u);
    EXPECT_EQ(round.pick({}, loads), 1u);
    EXPECT_EQ(round.pick({}, loads), 2u);
    EXPECT_EQ(round.pick({}, loads), 0u);
}

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const util::InputError& error) {
        return error.what();
    }
    return "";
}

TEST(SimulatorInput, BadInputNamesWhatIsWrong) {
    EXPECT_NE(error_of([] { (void)parse_router("random"); }).find("--router"), std::string::npos);
    EXPECT_NE(error_of([] {
                  (void)roofline_profile("h100-80g", "no-such-model", 0.5);
              }).find("no-such-model"),
              std::string::npos);
    EXPECT_NE(error_of([] { (void)roofline_profile("tpu", "llama3-8b", 0.5); }).find("--device"),
              std::string::npos);
    EXPECT_NE(
        error_of([] { (void)roofline_profile("h100-80g", "llama3-8b", 1.5); }).find("--efficiency"),
        std::string::npos);
    SimulateConfig config;
    config.simulation.profile = tiny_fleet(10, 8).profile;
    config.simulation.arrivals.request_rate = -2.0;
    EXPECT_NE(error_of([&] { run_simulation(config); }).find("--request-rate"), std::string::npos);
    nlohmann::json profile = profile_json(tiny_fleet(10, 8).profile);
    profile.erase("kv_blocks");
    EXPECT_NE(error_of([&] { (void)profile_from_json(profile, "p.json"); }).find("kv_blocks"),
              std::string::npos);
    profile = profile_json(tiny_fleet(10, 8).profile);
    profile["fixed_ms"] = "fast";
    EXPECT_NE(error_of([&] { (void)profile_from_json(profile, "p.json"); }).find("fixed_ms"),
              std::string::npos);
}

TEST(SimulatorProfile, JsonRoundTripsAndRooflineIsBandwidthBound) {
    const StepProfile profile = roofline_profile("h100-80g", "llama3-8b", 0.5);
    const StepProfile read = profile_from_json(profile_json(profile), "p");
    EXPECT_NEAR(read.fixed_s, profile.fixed_s, 1e-15);
    EXPECT_EQ(read.n_kv_blocks, profile.n_kv_blocks);
    EXPECT_NE(read.source.find("efficiency 0.50"), std::string::npos);
    // 16 GB of BF16 weights at half of 3.35 TB/s: about 9.6 ms a step.
    EXPECT_NEAR(profile.fixed_s, 0.0096, 0.0005);
    // One decode token costs far less than reading the weights once.
    EXPECT_LT(profile.per_token_s * 100, profile.fixed_s);
}

TEST(SimulatorProfile, AMeasuredRowsCurvePricesStepsAlongIt) {
    SimulationOptions options = tiny_fleet(100, 512);
    // 10 ms for one row, 11 for two, 15 for four; 2 ms a row past four.
    options.profile.row_costs = {{1, 0.010}, {2, 0.011}, {4, 0.015}};
    EXPECT_DOUBLE_EQ(options.profile.rows_seconds(3), 0.013);
    EXPECT_DOUBLE_EQ(options.profile.rows_seconds(8), 0.023);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2}};
    const SimulationResult result = simulate(requests, options, true);
    ASSERT_EQ(step_tokens(result), (std::vector<int32_t>{8, 1}));
    EXPECT_NEAR(result.run.results[0].ttft_s, 0.023, 1e-12);
    EXPECT_NEAR(result.run.results[0].e2e_s, 0.023 + 0.010, 1e-12);

    const StepProfile read = profile_from_json(profile_json(options.profile), "p.json");
    ASSERT_EQ(read.row_costs.size(), 3u);
    EXPECT_EQ(read.row_costs[2].n_rows, 4);
    EXPECT_NEAR(read.row_costs[2].seconds, 0.015, 1e-15);
    EXPECT_NE(format_profile(read).find("rows 1: 10.000 ms, 2: 11.000 ms, 4: 15.000 ms"),
              std::string::npos);
    nlohmann::json json = profile_json(options.profile);
    EXPECT_FALSE(json.contains("fixed_ms"));
    json["row_costs_ms"] = {{2, 11.0}, {1, 10.0}};
    EXPECT_NE(error_of([&] { (void)profile_from_json(json, "p.json"); }).find("row_costs_ms"),
              std::string::npos);
    json["row_costs_ms"] = {{1, 10.0}, {2, 0.0}};
    EXPECT_NE(error_of([&] { (void)profile_from_json(json, "p.json"); }).find("row_costs_ms"),
              std::string::npos);
}

TEST(SimulatorProfile, TheDecodeAndKvReadPricesRoundTripAndAreOptional) {
    StepProfile profile = tiny_fleet(100, 512).profile;
    profile.per_context_s = 1.5e-6;
    profile.per_decode_context_s = 1.25e-6;
    profile.per_kv_read_s = 1.4e-6;
    const StepProfile read = profile_from_json(profile_json(profile), "p.json");
    ASSERT_TRUE(read.per_decode_context_s.has_value());
    EXPECT_NEAR(*read.per_decode_context_s, 1.25e-6, 1e-18);
    EXPECT_NEAR(read.per_kv_read_s, 1.4e-6, 1e-18);
    EXPECT_NE(format_profile(read).find("1500.000 ns/context position (decode 1250.000), "
                                        "1400.000 ns/KV position read"),
              std::string::npos)
        << format_profile(read);
    // A file written before the split: every row at one price, no read part.
    nlohmann::json old = profile_json(profile);
    old.erase("per_decode_context_ns");
    old.erase("per_kv_read_ns");
    const StepProfile old_read = profile_from_json(old, "old.json");
    EXPECT_EQ(old_read.decode_context_seconds(), old_read.per_context_s);
    EXPECT_EQ(old_read.per_kv_read_s, 0.0);
    EXPECT_NE(format_profile(old_read).find("ns/context position, "), std::string::npos);
    old["per_kv_read_ns"] = -1.0;
    EXPECT_NE(error_of([&] { (void)profile_from_json(old, "p.json"); }).find("per_kv_read_ns"),
              std::string::npos);
}

}  // namespace simulator_test
}  // namespace ladder::tools
