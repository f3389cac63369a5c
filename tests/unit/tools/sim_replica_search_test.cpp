// --find-min-replicas' searches on made-up share curves worked out by hand
// (which fleets run, in what order, and the answer), the counter they measure
// with, and the simulator property the split search leans on.
#include "ladder/tools/sim_replica_search.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "ladder/tools/sim_workload.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace sim_replica_search_test {

std::vector<int32_t> counts(const std::vector<ReplicasTried>& tried) {
    std::vector<int32_t> out;
    for (const ReplicasTried& row : tried) out.push_back(row.n_replicas);
    return out;
}

std::vector<std::pair<int32_t, int32_t>> pairs(const std::vector<ReplicasTried>& tried) {
    std::vector<std::pair<int32_t, int32_t>> out;
    for (const ReplicasTried& row : tried) {
        EXPECT_EQ(row.n_replicas, row.n_prefill_replicas + row.n_decode_replicas);
        out.emplace_back(row.n_prefill_replicas, row.n_decode_replicas);
    }
    return out;
}

// Five or more replicas meet the SLOs.
SloShares five_or_more(int32_t n) {
    const double share = n >= 5 ? 1.0 : 0.5;
    return {share, share, share};
}

TEST(ReplicaSearch, DoublesFromTheStartThenBisects) {
    std::vector<ReplicasTried> tried;
    EXPECT_EQ(search_min_replicas(five_or_more, 1, {0.99, 4096}, tried), 5);
    EXPECT_EQ(counts(tried), (std::vector<int32_t>{1, 2, 4, 8, 6, 5}));
    EXPECT_EQ(tried[0].n_prefill_replicas, 0);  // colocated
}

TEST(ReplicaSearch, BisectsBelowAStartThatAlreadyMeets) {
    std::vector<ReplicasTried> tried;
    EXPECT_EQ(search_min_replicas(five_or_more, 16, {0.99, 4096}, tried), 5);
    EXPECT_EQ(counts(tried), (std::vector<int32_t>{16, 8, 4, 6, 5}));
}

TEST(ReplicaSearch, GivesUpAtTheLimitNamingIt) {
    std::vector<ReplicasTried> tried;
    try {
        search_min_replicas(five_or_more, 1, {0.99, 3}, tried);
        FAIL() << "3 replicas cannot meet an SLO that needs 5";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("3 replicas still miss"), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(counts(tried), (std::vector<int32_t>{1, 2, 3}));
}

// TTFT set by the prefill count, TPOT by the decode count, the misses of
// the two disjoint (so both = ttft + tpot - 1): at 0.99 the floors are 3
// prefill (0.992) and 5 decode (0.993), which together meet both only for
// 0.985; at 9, 3 + 6 reaches 0.991 and 4 + 5 0.992, the higher.
SloShares disjoint_misses(int32_t n_prefill, int32_t n_decode) {
    const double ttft = n_prefill >= 5   ? 1.0
                        : n_prefill == 4 ? 0.999
                        : n_prefill == 3 ? 0.992
                                         : 0.5;
    const double tpot = n_decode >= 6 ? 0.999 : n_decode == 5 ? 0.993 : 0.5;
    return {ttft, tpot, std::max(0.0, ttft + tpot - 1.0)};
}

TEST(ReplicaSplitSearch, FindsEachFloorThenWalksTheTotalsUp) {
    std::vector<ReplicasTried> tried;
    int32_t n_runs = 0;
    const ReplicaSplit split = search_min_split(
        [&](int32_t p, int32_t d) {
            ++n_runs;
            return disjoint_misses(p, d);
        },
        {1, 1}, {0.99, 4096}, tried);
    EXPECT_EQ(split.n_prefill, 4);
    EXPECT_EQ(split.n_decode, 5);
    // Prefill from 1 with the given decode count: 1, 2, 4, then 3. Decode at
    // 3 prefill from 1 (3 + 1 already run): 2, 4, 8, then 6 and 5. Total 8
    // (3 + 5) falls short; total 9 tries 3 + 6 (run) and 4 + 5.
    EXPECT_EQ(pairs(tried),
              (std::vector<std::pair<int32_t, int32_t>>{
                  {1, 1}, {2, 1}, {4, 1}, {3, 1}, {3, 2}, {3, 4}, {3, 8}, {3, 6}, {3, 5}, {4, 5}}));
    EXPECT_EQ(n_runs, 10) << "each pair runs once";
    EXPECT_NEAR(tried.back().shares.both, 0.992, 1e-12);
}

TEST(ReplicaSplitSearch, StopsAtTheFloorsWhenTheyMeetBoth) {
    std::vector<ReplicasTried> tried;
    const ReplicaSplit split = search_min_split(
        [](int32_t p, int32_t d) {
            const double ttft = p >= 2 ? 1.0 : 0.0;
            const double tpot = d >= 3 ? 1.0 : 0.0;
            return SloShares{ttft, tpot, std::min(ttft, tpot)};
        },
        {2, 4}, {0.99, 4096}, tried);
    EXPECT_EQ(split.n_prefill, 2);
    EXPECT_EQ(split.n_decode, 3);
    // From the given 2 + 4: prefill bisects to 1 (short) and keeps 2; decode
    // bisects 2 + 4 down through 2 + 2 (short) to 2 + 3, which meets both.
    EXPECT_EQ(pairs(tried),
              (std::vector<std::pair<int32_t, int32_t>>{{2, 4}, {1, 4}, {2, 2}, {2, 3}}));
}

TEST(ReplicaSplitSearch, GivesUpNamingTheSloThatCannotBeMet) {
    std::vector<ReplicasTried> tried;
    auto tpot_never = [](int32_t, int32_t) { return SloShares{1.0, 0.5, 0.5}; };
    try {
        search_min_split(tpot_never, {1, 1}, {0.99, 6}, tried);
        FAIL() << "no decode count meets TPOT";
    } catch (const util::InputError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("5 decode replicas (with 1 prefill) still miss the TPOT SLO"),
                  std::string::npos)
            << message;
    }
    std::set<std::pair<int32_t, int32_t>> distinct;
    for (const auto& pair : pairs(tried)) {
        EXPECT_LE(pair.first + pair.second, 6) << "past --max-replicas";
        EXPECT_TRUE(distinct.insert(pair).second) << "a pair ran twice";
    }
}

TEST(SloCounter, CountsEachSloAloneAndBoth) {
    SloCounter counter({200.0, 50.0});  // TTFT 200 ms, TPOT 50 ms
    auto finished = [](double ttft_s, double e2e_s, int64_t n_tokens) {
        RequestResult result;
        result.success = true;
        result.ttft_s = ttft_s;
        result.e2e_s = e2e_s;
        result.n_stream_tokens = n_tokens;
        return result;
    };
    counter.add(0, finished(0.1, 0.1 + 10 * 0.04, 11));  // both met
    counter.add(1, finished(0.3, 0.3 + 10 * 0.04, 11));  // TTFT missed
    counter.add(2, finished(0.1, 0.1 + 10 * 0.06, 11));  // TPOT missed
    counter.add(3, RequestResult{});                     // refused: meets none
    const SloShares shares = counter.shares();
    EXPECT_DOUBLE_EQ(shares.ttft, 0.5);
    EXPECT_DOUBLE_EQ(shares.tpot, 0.5);
    EXPECT_DOUBLE_EQ(shares.both, 0.25);
}

// What the split search's prefill step rests on: the decode group never
// holds a prefill back, so every request's TTFT is the same whatever the
// decode count (here 1 decode replica is overloaded, 4 are not).
TEST(ReplicaSplitSearch, TtftDoesNotDependOnTheDecodeGroup) {
    SimulationOptions options;
    options.profile.source = "test";
    options.profile.fixed_s = 0.010;
    options.profile.per_token_s = 0.0002;
    options.profile.block_size = 16;
    options.profile.n_kv_blocks = 400;
    options.profile.kv_bytes_per_token = 1000.0;
    options.arrivals.request_rate = 30.0;
    options.n_prefill_replicas = 2;
    DatasetOptions dataset;
    dataset.n_prompts = 300;
    dataset.input_len = 200;
    dataset.output_len = 60;
    dataset.range_ratio = 0.5;
    auto run = [&](int32_t n_decode) {
        options.n_decode_replicas = n_decode;
        SyntheticRequests stream(dataset, options.arrivals);
        RunRecorder recorder;
        const SimulationResult result = simulate(stream, recorder, options);
        return std::pair(recorder.run(), result.n_preemptions);
    };
    const auto [few, few_preemptions] = run(1);
    const auto [many, many_preemptions] = run(4);
    EXPECT_GT(few_preemptions, 0) << "one decode replica should be short of KV";
    ASSERT_EQ(few.results.size(), many.results.size());
    double few_e2e_s = 0.0;
    double many_e2e_s = 0.0;
    for (size_t i = 0; i < few.results.size(); ++i) {
        ASSERT_TRUE(few.results[i].success && many.results[i].success) << i;
        EXPECT_DOUBLE_EQ(few.results[i].ttft_s, many.results[i].ttft_s) << "request " << i;
        few_e2e_s += few.results[i].e2e_s;
        many_e2e_s += many.results[i].e2e_s;
    }
    EXPECT_GT(few_e2e_s, many_e2e_s) << "the decode count should change something";
}

}  // namespace sim_replica_search_test
}  // namespace ladder::tools
