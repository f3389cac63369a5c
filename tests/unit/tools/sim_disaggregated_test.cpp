// Disaggregated prefill and decode on cases worked out by hand: the
// profile prices every step, the link every prompt's KV.
#include <gtest/gtest.h>

#include "ladder/tools/sim_profile.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/error.h"
#include "sim_test_requests.h"

namespace ladder::tools {
namespace sim_disaggregated_test {

using sim_test::iota_tokens;
using sim_test::step_tokens;

// One prefill and one decode replica; 10 ms a step plus 1 ms a token; 1,000
// bytes of KV a token over a 1 MB/s link: 1 ms of transfer a prompt token.
SimulationOptions one_plus_one(int64_t n_kv_blocks = 100) {
    SimulationOptions options;
    options.profile.source = "test";
    options.profile.fixed_s = 0.010;
    options.profile.per_token_s = 0.001;
    options.profile.block_size = 4;
    options.profile.n_kv_blocks = n_kv_blocks;
    options.profile.kv_bytes_per_token = 1000.0;
    options.n_prefill_replicas = 1;
    options.n_decode_replicas = 1;
    options.kv_link_bytes_per_s = 1e6;
    return options;
}

TEST(SimDisaggregated, PrefillGivesTheFirstTokenTheTransferDelaysTheSecond) {
    SimulationOptions options = one_plus_one();
    options.profile.per_context_s = 1e-6;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 3}};
    const SimulationResult result = simulate(requests, options, true);
    // Prefill computes the 8 prompt tokens; the decode side, holding their
    // KV, computes the first token's row (giving the second), then the second's.
    ASSERT_EQ(step_tokens(result), (std::vector<int32_t>{8, 1, 1}));
    EXPECT_DOUBLE_EQ(result.steps[1].n_context, 9.0);
    EXPECT_NEAR(result.steps[1].start_s, 0.018 + 36e-6 + 0.008, 1e-12);
    const RequestResult& request = result.run.results[0];
    ASSERT_TRUE(request.success);
    EXPECT_NEAR(request.ttft_s, 0.018 + 36e-6, 1e-12);
    ASSERT_EQ(request.itls_s.size(), 2u);
    EXPECT_NEAR(request.itls_s[0], 0.008 + 0.011 + 9e-6, 1e-12);
    EXPECT_NEAR(request.itls_s[1], 0.011 + 10e-6, 1e-12);
    EXPECT_NEAR(request.e2e_s, 0.018 + 36e-6 + 0.008 + 0.011 + 9e-6 + 0.011 + 10e-6, 1e-12);
    EXPECT_EQ(request.output_tokens(), 3);
    EXPECT_EQ(result.n_kv_transfers, 1);
    EXPECT_DOUBLE_EQ(result.kv_transfer_bytes, 8000.0);
    EXPECT_NEAR(result.kv_transfer_s, 0.008, 1e-12);
    EXPECT_EQ(result.peak_used_blocks, 3);  // the decode side's, positions 0..9
}

TEST(SimDisaggregated, OneTokenOutputNeverLeavesThePrefillReplica) {
    const SimulationOptions options = one_plus_one();
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 1}};
    const SimulationResult result = simulate(requests, options, true);
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{8}));
    EXPECT_NEAR(result.run.results[0].e2e_s, 0.018, 1e-12);
    EXPECT_EQ(result.n_kv_transfers, 0);
}

TEST(SimDisaggregated, ALinkSendsOnePromptAtATime) {
    const SimulationOptions options = one_plus_one();
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2},
                                              {1, 0.0, iota_tokens(8, 101), 2}};
    const SimulationResult result = simulate(requests, options, true);
    // One prefill step of 16 tokens ends at 26 ms; A's KV arrives at 34 ms,
    // B's (after A's) at 42 ms, while A decodes (34 to 45 ms); B then decodes
    // alone in the next step, from 45 to 56 ms.
    EXPECT_EQ(step_tokens(result), (std::vector<int32_t>{16, 1, 1}));
    const RequestResult& a = result.run.results[0];
    const RequestResult& b = result.run.results[1];
    EXPECT_NEAR(a.ttft_s, 0.026, 1e-12);
    EXPECT_NEAR(b.ttft_s, 0.026, 1e-12);
    EXPECT_NEAR(a.e2e_s, 0.045, 1e-12);
    EXPECT_NEAR(b.e2e_s, 0.056, 1e-12);
    EXPECT_NEAR(result.kv_transfer_s, 0.016, 1e-12);
}

TEST(SimDisaggregated, ThePrefillSideHoldsTheBlocksUntilTheTransferEnds) {
    // Four blocks of 4: A's 8-token prompt holds two while its KV is sent
    // (18 to 26 ms); B's 12 tokens need three, so B waits for the release.
    const SimulationOptions options = one_plus_one(4);
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2},
                                              {1, 0.019, iota_tokens(12, 101), 2}};
    const SimulationResult result = simulate(requests, options, true);
    const RequestResult& b = result.run.results[1];
    ASSERT_TRUE(b.success);
    EXPECT_NEAR(b.ttft_s, 0.026 + 0.022 - 0.019, 1e-12);
}

TEST(SimDisaggregated, RefusesAProfileWithoutTheKvSize) {
    SimulationOptions options = one_plus_one();
    options.profile.kv_bytes_per_token = 0.0;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(8, 1), 2}};
    EXPECT_THROW(simulate(requests, options), util::InputError);
    options = one_plus_one();
    options.n_decode_replicas = 0;
    EXPECT_THROW(simulate(requests, options), util::InputError);
}

}  // namespace sim_disaggregated_test
}  // namespace ladder::tools

namespace ladder::tools {
namespace sim_disaggregated_test {

TEST(SimRoofline, DeepSeekV3SpansGpusWithMlaKv) {
    // 671e9 FP8 weights over 16 H800s at full efficiency, 37e9 active.
    const StepProfile profile = roofline_profile("h800-80g", "deepseek-v3", 1.0, 1.0, 0.9, 16);
    EXPECT_NEAR(profile.fixed_s, 671e9 / (16 * 3.35e12), 1e-12);
    EXPECT_NEAR(profile.per_token_s, 2 * 37e9 / (16 * 989e12), 1e-15);
    EXPECT_DOUBLE_EQ(profile.kv_bytes_per_token, 61.0 * 576 * 2);
    EXPECT_EQ(profile.gpus_per_replica, 16);
    EXPECT_THROW((void)roofline_profile("h800-80g", "deepseek-v3", 1.0, 1.0), util::InputError);
}

}  // namespace sim_disaggregated_test
}  // namespace ladder::tools
