// The scheduler under random load: arrivals at random steps, random lengths,
// random aborts, shared prefixes, and a KV cache small enough to force
// preemption and cache eviction. Whatever happened, every block is free at the end and every
// request that finished produced exactly what it produces alone (greedy and seeded alike).
#include <gtest/gtest.h>

#include <random>

#include "engine_test_support.h"

namespace ladder::engine::testing {
namespace {

const char* const kWords[] = {"the",    "cache", "holds", "keys",   "and",     "values",    "of",
                              "every",  "token", "in",    "blocks", "sixteen", "long",      "so",
                              "memory", "is",    "never", "wasted", "by",      "fragments", "."};

std::string random_text(std::mt19937& rng, int n_words) {
    std::string text;
    for (int i = 0; i < n_words; ++i) {
        if (i) text += ' ';
        text += kWords[rng() % std::size(kWords)];
    }
    return text;
}

int64_t block_bytes() {
    return int64_t{23040} * 16;
}  // SmolLM2: 30 layers x 3 kv heads x 64 x 2 x F16

TEST_F(EngineTest, RandomLoadWithPreemptionMatchesEachRequestAlone) {
    ASSERT_EQ(bundle_->model->kv_cache_shape(1, 16).bytes_per_token() * 16, block_bytes());
    std::mt19937 rng(20261129);
    EngineConfig config;
    config.kv_cache_bytes = 12 * block_bytes();  // 192 tokens for up to 8 sequences
    config.max_num_seqs = 8;
    config.max_num_batched_tokens = 24;
    auto core = make_core(config);

    constexpr int kRequests = 20;
    const std::string shared_prefixes[2] = {random_text(rng, 36), random_text(rng, 20)};
    std::vector<RequestParams> requests;
    for (int i = 0; i < kRequests; ++i) {
        RequestParams params;
        // Half the prompts start with one of two shared prefixes, so the
        // prefix cache hits, gets evicted and is re-found under preemption.
        std::string text = random_text(rng, 2 + static_cast<int>(rng() % 30));
        if (rng() % 2 == 0) text = shared_prefixes[rng() % 2] + " " + text;
        params.prompt = encode(text);
        params.max_tokens = 1 + static_cast<int32_t>(rng() % 24);
        params.ignore_eos = rng() % 2 == 0;
        if (i % 3 == 0) {
            params.sampling.temperature = 0.0f;
        } else {
            params.sampling.temperature = 0.9f;
            params.sampling.top_p = 0.95f;
            params.sampling.seed = rng();
        }
        if (i % 5 == 0) params.logprobs = 2;
        requests.push_back(std::move(params));
    }

    std::map<RequestId, Collected> results;
    std::vector<RequestId> aborted;
    int next = 0;
    int64_t max_used = 0;
    for (int guard = 0; next < kRequests || core->has_work(); ++guard) {
        ASSERT_LT(guard, 100000);
        while (next < kRequests && rng() % 3 == 0) {
            const RequestId id{static_cast<uint64_t>(next)};
            core->add_request(id, requests[static_cast<size_t>(next)], collect_into(results, id));
            ++next;
        }
        if (core->has_work() && rng() % 40 == 0) {
            const RequestId victim{rng() % static_cast<uint64_t>(next)};
            if (!results[victim].finish_reason) {
                core->abort(victim);
                aborted.push_back(victim);
            }
        }
        core->step();
        max_used = std::max<int64_t>(max_used, core->stats().n_blocks_used);
    }

    EXPECT_EQ(core->n_free_blocks(), core->kv_plan().n_blocks);
    EXPECT_GT(core->stats().n_preemptions, 0) << "the budget was meant to force preemption";
    EXPECT_EQ(max_used, core->kv_plan().n_blocks);
    EXPECT_GT(core->stats().n_prefix_hit_tokens, 0) << "the shared prefixes were meant to hit";
    for (int i = 0; i < kRequests; ++i) {
        const RequestId id{static_cast<uint64_t>(i)};
        const Collected& got = results[id];
        ASSERT_TRUE(got.finish_reason.has_value()) << "request " << i << " never finished";
        EXPECT_EQ(got.n_outputs_after_finish, 0);
        if (std::find(aborted.begin(), aborted.end(), id) != aborted.end()) {
            EXPECT_EQ(got.finish_reason, FinishReason::Abort);
            continue;
        }
        const Collected alone = run_alone(requests[static_cast<size_t>(i)]);
        EXPECT_EQ(got.tokens, alone.tokens) << "request " << i;
        EXPECT_EQ(got.text, alone.text) << "request " << i;
        EXPECT_EQ(got.finish_reason, alone.finish_reason) << "request " << i;
        ASSERT_EQ(got.logprobs.size(), alone.logprobs.size());
        for (size_t t = 0; t < got.logprobs.size(); ++t) {
            EXPECT_EQ(got.logprobs[t].logprob, alone.logprobs[t].logprob);
            EXPECT_EQ(got.logprobs[t].top, alone.logprobs[t].top);
        }
    }
}

// Each abort case: the request's last output says Abort, nothing follows it,
// the others finish normally, and every block comes back.
class AbortTest : public EngineTest {
protected:
    void expect_clean_abort(EngineCore& core, std::map<RequestId, Collected>& results,
                            RequestId id) {
        core.abort(id);
        EXPECT_EQ(results[id].finish_reason, FinishReason::Abort);
        run_to_end(core);
        EXPECT_EQ(results[id].n_outputs_after_finish, 0);
        for (const auto& [other, collected] : results) {
            if (other != id) {
                EXPECT_NE(collected.finish_reason, FinishReason::Abort);
            }
        }
        EXPECT_EQ(core.n_free_blocks(), core.kv_plan().n_blocks);
        EXPECT_FALSE(core.has_work());
    }
    RequestParams long_request(int32_t max_tokens) {
        RequestParams params;
        params.prompt = encode(
            "Abort must free every block whatever the state of the request: "
            "waiting, computing its prompt, decoding, or preempted.");
        params.sampling.temperature = 0.0f;
        params.max_tokens = max_tokens;
        params.ignore_eos = true;
        return params;
    }
};

TEST_F(AbortTest, WhileWaiting) {
    EngineConfig config;
    config.max_num_seqs = 1;
    auto core = make_core(config);
    std::map<RequestId, Collected> results;
    core->add_request(RequestId{1}, long_request(4), collect_into(results, RequestId{1}));
    core->add_request(RequestId{2}, long_request(4), collect_into(results, RequestId{2}));
    core->step();
    EXPECT_EQ(core->stats().n_waiting, 1);
    expect_clean_abort(*core, results, RequestId{2});
    EXPECT_TRUE(results[RequestId{2}].tokens.empty());
    EXPECT_EQ(results[RequestId{1}].finish_reason, FinishReason::Length);
}

TEST_F(AbortTest, MidPrefill) {
    EngineConfig config;
    config.max_num_seqs = 2;
    config.max_num_batched_tokens = 8;
    auto core = make_core(config);
    std::map<RequestId, Collected> results;
    core->add_request(RequestId{1}, long_request(4), collect_into(results, RequestId{1}));
    core->step();
    EXPECT_GT(core->stats().n_blocks_used, 0);
    EXPECT_TRUE(results[RequestId{1}].tokens.empty());
    expect_clean_abort(*core, results, RequestId{1});
}

TEST_F(AbortTest, WhileDecoding) {
    auto core = make_core({});
    std::map<RequestId, Collected> results;
    core->add_request(RequestId{1}, long_request(50), collect_into(results, RequestId{1}));
    core->add_request(RequestId{2}, long_request(5), collect_into(results, RequestId{2}));
    while (results[RequestId{1}].tokens.size() < 3) core->step();
    expect_clean_abort(*core, results, RequestId{1});
    EXPECT_EQ(results[RequestId{2}].tokens.size(), 5u);
}

TEST_F(AbortTest, WhilePreempted) {
    EngineConfig config;
    config.kv_cache_bytes = 6 * block_bytes();  // 96 tokens: two of these cannot both finish
    auto core = make_core(config);
    std::map<RequestId, Collected> results;
    core->add_request(RequestId{1}, long_request(40), collect_into(results, RequestId{1}));
    core->add_request(RequestId{2}, long_request(40), collect_into(results, RequestId{2}));
    for (int guard = 0; core->stats().n_preemptions == 0; ++guard) {
        ASSERT_LT(guard, 1000) << "no preemption happened";
        core->step();
    }
    EXPECT_EQ(core->stats().n_waiting, 1);
    expect_clean_abort(*core, results, RequestId{2});
    EXPECT_GE(results[RequestId{2}].last.n_preemptions, 1);
    EXPECT_EQ(results[RequestId{1}].tokens.size(), 40u);
}

}  // namespace
}  // namespace ladder::engine::testing
