// The prefix cache's tiers below a simulated replica's memory: what a tier
// holds (its oldest write dropped first), and what reading from it costs
// and saves, against the hand-worked timing of one replica.
#include <gtest/gtest.h>

#include "ladder/tools/sim_kv_tier.h"
#include "ladder/tools/simulator.h"
#include "sim_test_requests.h"

namespace ladder::tools {
namespace sim_kv_tier_test {

using sim_test::iota_tokens;

TEST(SimKvTier, DropsItsOldestWriteFirstAndCountsPrivateBlocks) {
    SimKvTier tier(3);
    const kv::BlockHash a{1, 1}, b{2, 2}, c{3, 3};
    tier.write(a);
    const int64_t own = tier.write_private();
    tier.write(b);
    tier.write(a);  // held: not written again
    EXPECT_EQ(tier.n_written(), 3);
    EXPECT_TRUE(tier.contains(a) && tier.contains(b) && tier.holds_stamp(own));
    tier.write(c);  // a, the oldest write, goes
    EXPECT_FALSE(tier.contains(a));
    EXPECT_TRUE(tier.holds_stamp(own) && tier.contains(b) && tier.contains(c));
    tier.write_private();  // and then the private block
    EXPECT_FALSE(tier.holds_stamp(own));
    EXPECT_FALSE(tier.holds_stamp(SimKvTier::kNotWritten));
}

// 10 ms a step, 1 ms a token, 8 blocks of 4 tokens of 1,000 bytes each.
SimulationOptions small_memory() {
    SimulationOptions options;
    options.profile.source = "test";
    options.profile.fixed_s = 0.010;
    options.profile.per_token_s = 0.001;
    options.profile.block_size = 4;
    options.profile.n_kv_blocks = 8;
    options.profile.kv_bytes_per_token = 250.0;
    options.replica.max_num_batched_tokens = 64;
    options.replica.disk.bytes_per_s = 1e6;  // a block: 1 ms
    options.replica.remote.bytes_per_s = 1e6;
    options.replica.remote.latency_s = 0.002;
    return options;
}

// A 16-token prompt, then one of 28 that needs all 8 blocks (evicting the
// first from memory), then the first prompt again.
std::vector<SimRequest> evicting_requests() {
    return {{0, 0.0, iota_tokens(16, 1), 1},
            {1, 1.0, iota_tokens(28, 101), 4},
            {2, 2.0, iota_tokens(16, 1), 1}};
}

TEST(SimKvTier, DiskTierServesWhatMemoryEvicted) {
    SimulationOptions options = small_memory();
    const SimulationResult memory_only = simulate(evicting_requests(), options, true);
    EXPECT_EQ(memory_only.n_prefix_hit_tokens, 0);  // evicted before it came back
    options.replica.disk.capacity_bytes = 100'000;
    const SimulationResult with_disk = simulate(evicting_requests(), options, true);
    // The prompt's 3 full blocks before its last token come from disk.
    EXPECT_EQ(with_disk.n_prefix_hit_tokens, 12);
    EXPECT_EQ(with_disk.n_disk_hit_tokens, 12);
    EXPECT_EQ(with_disk.n_remote_hit_tokens, 0);
    const SimStep& last = with_disk.steps.back();
    EXPECT_NEAR(last.load_s, 0.003, 1e-12);
    // 3 ms of reads and 4 tokens computed, against 16 tokens computed.
    EXPECT_NEAR(with_disk.run.results[2].ttft_s, 0.003 + 0.014, 1e-12);
    EXPECT_NEAR(memory_only.run.results[2].ttft_s, 0.026, 1e-12);
}

TEST(SimKvTier, DiskTierTooSmallHoldsOnlyTheNewestWrites) {
    SimulationOptions options = small_memory();
    options.replica.disk.capacity_bytes = 4'000;  // 4 blocks: the second prompt's 7 push them out
    const SimulationResult result = simulate(evicting_requests(), options, true);
    EXPECT_EQ(result.n_disk_hit_tokens, 0);
}

TEST(SimKvTier, RemoteTierIsSharedByTheFleet) {
    SimulationOptions options = small_memory();
    options.n_replicas = 2;  // round-robin: the repeat goes to the other replica
    options.profile.n_kv_blocks = 100;
    const std::vector<SimRequest> requests = {{0, 0.0, iota_tokens(16, 1), 1},
                                              {1, 1.0, iota_tokens(16, 1), 1}};
    options.replica.disk.capacity_bytes = 100'000;  // each replica's own: no help
    EXPECT_EQ(simulate(requests, options).n_prefix_hit_tokens, 0);
    options.replica.remote.capacity_bytes = 100'000;
    const SimulationResult result = simulate(requests, options, true);
    EXPECT_EQ(result.n_remote_hit_tokens, 12);
    EXPECT_EQ(result.n_disk_hit_tokens, 0);
    // 2 ms of round trip, 3 ms of reads.
    EXPECT_NEAR(result.steps.back().load_s, 0.005, 1e-12);
}

}  // namespace sim_kv_tier_test
}  // namespace ladder::tools
