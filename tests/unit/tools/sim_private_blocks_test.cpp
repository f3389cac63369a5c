// The simulator's fast path for the blocks past a request's shared prefix
// (kept as cached but out of the prefix index, found again only by their own
// request after a preemption) must take exactly the steps the indexed path
// takes, and a small pressured run's summary stays what it was before the
// fast path existed.
#include <gtest/gtest.h>

#include <limits>

#include "ladder/kv/block_pool.h"
#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/sim_summary.h"
#include "ladder/tools/sim_workload.h"
#include "ladder/tools/simulator.h"

namespace ladder::tools {
namespace sim_private_blocks_test {

// The run of the figures pinned below: 2 replicas behind prefix affinity,
// 64 blocks of 4 each, so that preemption and eviction are constant.
SimulationOptions pressured_fleet() {
    SimulationOptions options;
    options.profile.source = "pin";
    options.profile.fixed_s = 0.010;
    options.profile.per_token_s = 0.001;
    options.profile.per_context_s = 100e-9;
    options.profile.block_size = 4;
    options.profile.n_kv_blocks = 64;
    options.replica.max_num_batched_tokens = 32;
    options.replica.max_num_seqs = 16;
    options.n_replicas = 2;
    options.router = RouterKind::PrefixAffinity;
    options.arrivals.request_rate = 40.0;
    return options;
}

DatasetOptions prefix_workload() {
    DatasetOptions dataset;
    dataset.kind = "prefix";
    dataset.prefix_len = 30;
    dataset.n_prefixes = 3;
    dataset.input_len = 20;
    dataset.output_len = 40;
    dataset.n_prompts = 300;
    dataset.seed = 7;
    return dataset;
}

DatasetOptions random_workload() {
    DatasetOptions dataset;
    dataset.kind = "random";
    dataset.input_len = 40;
    dataset.output_len = 60;
    dataset.n_prompts = 300;
    dataset.seed = 7;
    return dataset;
}

// The workload's requests, drawn as simulate draws them; `all_shared`
// marks every block as shareable, so every block goes through the index.
std::vector<SimRequest> draw_requests(const DatasetOptions& dataset,
                                      const SimulationOptions& options, bool all_shared) {
    SyntheticRequests stream(dataset, options.arrivals);
    std::vector<SimRequest> requests;
    SimRequest request;
    while (stream.next(request)) {
        if (all_shared) request.n_shared_tokens = std::numeric_limits<int32_t>::max();
        requests.push_back(request);
    }
    return requests;
}

void expect_same_run(const SimulationResult& fast, const SimulationResult& indexed) {
    ASSERT_EQ(fast.steps.size(), indexed.steps.size());
    for (size_t i = 0; i < fast.steps.size(); ++i) {
        const SimStep& a = fast.steps[i];
        const SimStep& b = indexed.steps[i];
        ASSERT_EQ(a.start_s, b.start_s) << "step " << i;
        ASSERT_EQ(a.n_tokens, b.n_tokens) << "step " << i;
        ASSERT_EQ(a.n_sequences, b.n_sequences) << "step " << i;
        ASSERT_EQ(a.n_context, b.n_context) << "step " << i;
        ASSERT_EQ(a.n_preempted, b.n_preempted) << "step " << i;
    }
    EXPECT_EQ(fast.n_prefix_hit_tokens, indexed.n_prefix_hit_tokens);
    EXPECT_EQ(fast.n_prefix_queried_tokens, indexed.n_prefix_queried_tokens);
    ASSERT_EQ(fast.run.results.size(), indexed.run.results.size());
    for (size_t i = 0; i < fast.run.results.size(); ++i) {
        EXPECT_EQ(fast.run.results[i].e2e_s, indexed.run.results[i].e2e_s) << "request " << i;
        EXPECT_EQ(fast.run.results[i].usage_cached_tokens,
                  indexed.run.results[i].usage_cached_tokens)
            << "request " << i;
    }
}

TEST(SimPrivateBlocks, SharedPrefixesUnderPressureTakeTheIndexedPathsSteps) {
    const SimulationOptions options = pressured_fleet();
    const SimulationResult fast =
        simulate(draw_requests(prefix_workload(), options, false), options, true);
    const SimulationResult indexed =
        simulate(draw_requests(prefix_workload(), options, true), options, true);
    EXPECT_GT(fast.n_preemptions, 0);
    EXPECT_GT(fast.n_prefix_hit_tokens, 0);
    expect_same_run(fast, indexed);
}

TEST(SimPrivateBlocks, PreemptedRequestsFindTheirOwnPrivateBlocksAgain) {
    // No prompt shares a block with another: every hit is a preempted
    // request taking back its own blocks, all of them private on the fast path.
    const SimulationOptions options = pressured_fleet();
    const SimulationResult fast =
        simulate(draw_requests(random_workload(), options, false), options, true);
    const SimulationResult indexed =
        simulate(draw_requests(random_workload(), options, true), options, true);
    EXPECT_GT(fast.n_preemptions, 0);
    EXPECT_GT(fast.n_prefix_hit_tokens, 0);
    expect_same_run(fast, indexed);
}

// What `ladder simulate --profile P --replicas 2 --router prefix-affinity
// --max-num-batched-tokens 32 --max-num-seqs 16 --num-prompts 300
// --request-rate 40 --seed 7` with the datasets above printed before the
// private-block path, the pool's one-record-a-block layout and the event
// loop's changes: the same steps, preemptions, hits and latencies.
struct Pinned {
    int64_t n_steps;
    int64_t n_preemptions;
    int32_t peak_used_blocks;
    int64_t n_prefix_hit_tokens;
    int64_t n_prefix_queried_tokens;
    double mean_ttft_ms;
    double mean_tpot_ms;
    double duration_s;
};

void expect_pinned(const DatasetOptions& dataset, const Pinned& pinned) {
    SimulationOptions options = pressured_fleet();
    SyntheticRequests stream(dataset, options.arrivals);
    RunRecorder recorder;
    const SimulationResult result = simulate(stream, recorder, options);
    recorder.run().duration_s = result.duration_s;
    const BenchSummary summary = summarize(recorder.run(), SummaryOptions{});
    EXPECT_EQ(result.n_steps, pinned.n_steps);
    EXPECT_EQ(result.n_preemptions, pinned.n_preemptions);
    EXPECT_EQ(result.peak_used_blocks, pinned.peak_used_blocks);
    EXPECT_EQ(result.n_prefix_hit_tokens, pinned.n_prefix_hit_tokens);
    EXPECT_EQ(result.n_prefix_queried_tokens, pinned.n_prefix_queried_tokens);
    EXPECT_NEAR(summary.ttft_ms.mean, pinned.mean_ttft_ms, 1e-9);
    EXPECT_NEAR(summary.tpot_ms.mean, pinned.mean_tpot_ms, 1e-9);
    EXPECT_NEAR(result.duration_s, pinned.duration_s, 1e-9);
    EXPECT_EQ(summary.n_completed, 300);
}

TEST(SimPrivateBlocks, PressuredPrefixRunIsPinned) {
    expect_pinned(prefix_workload(), {3109, 336, 64, 18500, 34257, 10243.770880153765,
                                      21.31461036752145, 29.96386920000007});
}

TEST(SimPrivateBlocks, PressuredRandomRunIsPinned) {
    expect_pinned(random_workload(), {5719, 506, 64, 9364, 36656, 20269.244576695117,
                                      19.819829514124322, 50.826257400000046});
}

TEST(BlockPoolPrivate, APrivateBlockIsEvictedAsACachedOneAndFoundOnlyByItsId) {
    kv::BlockPool pool(2, 4);
    const kv::BlockHash hash{1, 2};
    const kv::BlockId block = pool.allocate();
    pool.cache_private(block, hash);
    EXPECT_TRUE(pool.is_cached(block));
    EXPECT_EQ(pool.n_cached(), 0);                     // not in the index
    EXPECT_FALSE(pool.find_cached(hash).has_value());  // nor found by content
    pool.release(block);
    EXPECT_EQ(pool.take_private(block, kv::BlockHash{1, 3}), std::nullopt);
    ASSERT_EQ(pool.take_private(block, hash), block);
    EXPECT_EQ(pool.ref_count(block), 1);
    pool.release(block);
    // The plain block goes first, then the private one is evicted and forgotten.
    const kv::BlockId plain = pool.allocate();
    EXPECT_NE(plain, block);
    EXPECT_EQ(pool.allocate(), block);
    EXPECT_EQ(pool.n_evictions(), 1);
    EXPECT_FALSE(pool.is_cached(block));
    EXPECT_EQ(pool.take_private(block, hash), std::nullopt);
}

}  // namespace sim_private_blocks_test
}  // namespace ladder::tools
