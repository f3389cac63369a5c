// The engine step on the real default model: outputs, stop rules, limits,
// chunked prefill and abort, each checked against the same request run alone.
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "ladder/util/error.h"

namespace ladder::engine::testing {
namespace {

RequestParams greedy(std::vector<TokenId> prompt, int32_t max_tokens) {
    RequestParams params;
    params.prompt = std::move(prompt);
    params.sampling.temperature = 0.0f;
    params.max_tokens = max_tokens;
    return params;
}

TEST_F(EngineTest, MaxTokensEndsWithLengthAndFreesEveryBlock) {
    auto core = make_core({.max_num_seqs = 4});
    std::map<RequestId, Collected> results;
    RequestParams params = greedy(encode("The capital of France is"), 12);
    params.ignore_eos = true;
    core->add_request(RequestId{7}, params, collect_into(results, RequestId{7}));
    run_to_end(*core);
    const Collected& c = results[RequestId{7}];
    EXPECT_EQ(c.finish_reason, FinishReason::Length);
    EXPECT_EQ(c.tokens.size(), 12u);
    EXPECT_EQ(c.last.n_generated_tokens, 12);
    EXPECT_EQ(c.last.n_prompt_tokens, static_cast<int32_t>(params.prompt.size()));
    EXPECT_EQ(c.n_outputs_after_finish, 0);
    EXPECT_FALSE(c.text.empty());
    EXPECT_EQ(c.text, bundle_->tokenizer->decode(c.tokens));
    EXPECT_GT(c.last.timings.first_token, 0.0);
    EXPECT_GE(c.last.timings.finished, c.last.timings.first_token);
    EXPECT_GE(c.last.timings.first_scheduled, c.last.timings.arrival);
    EXPECT_EQ(core->n_free_blocks(), core->kv_plan().n_blocks);
    EXPECT_EQ(core->stats().n_finished, 1);
}

TEST_F(EngineTest, ChunkedPrefillGivesTheSameLogitsAsOneShot) {
    RequestParams params = greedy(encode("A long prompt, cut into chunks of seven tokens, must "
                                         "give exactly the logits of one pass over it."),
                                  6);
    params.logprobs = 5;
    const Collected one_shot = run_alone(params, 512);
    const Collected chunked = run_alone(params, 7);
    ASSERT_EQ(one_shot.tokens, chunked.tokens);
    ASSERT_EQ(one_shot.logprobs.size(), chunked.logprobs.size());
    for (size_t i = 0; i < one_shot.logprobs.size(); ++i) {
        EXPECT_EQ(one_shot.logprobs[i].logprob, chunked.logprobs[i].logprob) << i;
        EXPECT_EQ(one_shot.logprobs[i].top, chunked.logprobs[i].top) << i;
    }
}

TEST_F(EngineTest, StopStringAcrossTokensEndsTheTextBeforeIt) {
    RequestParams params = greedy(encode("Count: one, two, three, four, five,"), 24);
    params.ignore_eos = true;
    const Collected free_run = run_alone(params);
    // A stop string that starts inside one token and ends in a later one.
    ASSERT_GE(free_run.tokens.size(), 6u);
    const std::string head = bundle_->tokenizer->decode({free_run.tokens.data(), 2});
    const std::string stop = free_run.text.substr(head.size() - 1, 4);
    params.stop = StopStrings({stop});
    const Collected stopped = run_alone(params);
    EXPECT_EQ(stopped.finish_reason, FinishReason::Stop);
    EXPECT_EQ(stopped.text, free_run.text.substr(0, free_run.text.find(stop)));
    EXPECT_LT(stopped.tokens.size(), free_run.tokens.size());
}

TEST_F(EngineTest, StopTokenIdEndsWithStopAndNoText) {
    RequestParams params = greedy(encode("Count: one, two, three, four, five,"), 16);
    params.ignore_eos = true;
    const Collected free_run = run_alone(params);
    ASSERT_GE(free_run.tokens.size(), 4u);
    params.stop_token_ids = std::set<TokenId>{free_run.tokens[3]};
    const Collected stopped = run_alone(params);
    EXPECT_EQ(stopped.finish_reason, FinishReason::Stop);
    const auto first =
        std::find(free_run.tokens.begin(), free_run.tokens.end(), free_run.tokens[3]);
    const auto n_before = static_cast<size_t>(first - free_run.tokens.begin());
    EXPECT_EQ(stopped.tokens.size(), n_before + 1);
    EXPECT_EQ(stopped.text, bundle_->tokenizer->decode({free_run.tokens.data(), n_before}));
}

TEST_F(EngineTest, RefusesWhatCannotFitTheContext) {
    auto core = make_core({.max_model_len = 64});
    EXPECT_THROW(core->validate(greedy(encode("hello"), 64)), util::InputError);
    EXPECT_THROW(core->validate(greedy({}, 4)), util::InputError);
    EXPECT_THROW(core->validate(greedy({1, -3}, 4)), util::InputError);
    EXPECT_THROW(core->validate(greedy({1, 1 << 30}, 4)), util::InputError);
    EXPECT_THROW(core->validate(greedy({1}, 0)), util::InputError);
    RequestParams no_limit = greedy(encode("hello"), 1);
    no_limit.max_tokens.reset();
    EXPECT_EQ(core->validate(no_limit), 64 - static_cast<int32_t>(no_limit.prompt.size()));
    RequestParams bad_logprobs = greedy({1}, 1);
    bad_logprobs.logprobs = 21;
    EXPECT_THROW(core->validate(bad_logprobs), util::InputError);
}

TEST_F(EngineTest, RefusesARequestLargerThanTheWholeKvCache) {
    const int64_t bytes_per_block = bundle_->model->kv_cache_shape(1, 16).bytes_per_token() * 16;
    auto core = make_core({.kv_cache_bytes = 4 * bytes_per_block});
    EXPECT_EQ(core->kv_plan().n_blocks, 4);
    EXPECT_NO_THROW(core->validate(greedy(encode("hi"), 32)));
    EXPECT_THROW(core->validate(greedy(encode("hi"), 64)), util::InputError);
}

// Prefix caching: a request whose prompt starts with blocks another request
// computed reuses them, reports them as cached, and produces what it
// produces with the cache off (greedy and seeded).
TEST_F(EngineTest, PrefixCacheHitsGiveTheSameOutputsAsNoCache) {
    const std::vector<TokenId> shared = encode(
        "You are a support assistant for a company that sells ladders. Answer briefly, be "
        "polite, and never invent a product that the catalogue does not list. The catalogue:");
    ASSERT_GT(shared.size(), 32u);
    std::vector<RequestParams> requests;
    for (const char* question : {" step ladders.", " extension ladders and their prices?"}) {
        RequestParams params = greedy(shared, 8);
        const std::vector<TokenId> tail = bundle_->tokenizer->encode(question, false, false);
        params.prompt.insert(params.prompt.end(), tail.begin(), tail.end());
        requests.push_back(params);
        params.sampling.temperature = 0.8f;
        params.sampling.seed = 42;
        requests.push_back(params);
    }
    requests.push_back(greedy(shared, 8));  // an exact prefix of the others
    std::vector<TokenId> mid_block(shared.begin(), shared.begin() + 21);
    requests.push_back(greedy(mid_block, 8));  // ends inside the second block

    EngineConfig no_cache;
    no_cache.prefix_caching = false;
    auto cold = make_core(no_cache);
    auto warm = make_core({});
    std::map<RequestId, Collected> cold_results;
    std::map<RequestId, Collected> warm_results;
    for (size_t i = 0; i < requests.size(); ++i) {
        const RequestId id{i};
        cold->add_request(id, requests[i], collect_into(cold_results, id));
        run_to_end(*cold);
        warm->add_request(id, requests[i], collect_into(warm_results, id));
        run_to_end(*warm);
    }
    for (size_t i = 0; i < requests.size(); ++i) {
        const RequestId id{i};
        EXPECT_EQ(warm_results[id].tokens, cold_results[id].tokens) << i;
        EXPECT_EQ(cold_results[id].last.n_cached_prompt_tokens, 0) << i;
        // Expected: the full blocks this prompt shares with what an earlier
        // request computed (its prompt and all but its last generated token),
        // never the prompt's last token.
        const std::vector<TokenId>& prompt = requests[i].prompt;
        size_t expected = 0;
        for (size_t j = 0; j < i; ++j) {
            std::vector<TokenId> computed = requests[j].prompt;
            const std::vector<TokenId>& generated = cold_results[RequestId{j}].tokens;
            computed.insert(computed.end(), generated.begin(), generated.end() - 1);
            size_t common = 0;
            while (common < std::min(prompt.size() - 1, computed.size()) &&
                   prompt[common] == computed[common]) {
                ++common;
            }
            expected = std::max(expected, common / 16 * 16);
        }
        EXPECT_EQ(warm_results[id].last.n_cached_prompt_tokens, static_cast<int32_t>(expected))
            << i;
    }
    EXPECT_GT(warm->stats().n_prefix_hit_tokens, 0);
    EXPECT_EQ(warm->n_free_blocks(), warm->kv_plan().n_blocks);
    EXPECT_GT(warm->stats().n_blocks_cached, 0);
}

// n > 1 choices arrive together: the first computes the shared prompt, the
// others wait for its blocks instead of computing them again.
TEST_F(EngineTest, ChoicesOfOnePromptShareItsPrefill) {
    RequestParams params = greedy(encode("Four choices from one long prompt should compute the "
                                         "prompt once and share its blocks among them all."),
                                  6);
    params.sampling.temperature = 0.9f;
    const int32_t n_prompt = static_cast<int32_t>(params.prompt.size());
    const int32_t shareable = (n_prompt - 1) / 16 * 16;
    ASSERT_GE(shareable, 16);
    auto core = make_core({});
    std::map<RequestId, Collected> results;
    std::vector<Collected> alone;
    for (uint64_t i = 0; i < 4; ++i) {
        params.sampling.seed = i;
        alone.push_back(run_alone(params));
        core->add_request(RequestId{i}, params, collect_into(results, RequestId{i}));
    }
    run_to_end(*core);
    for (uint64_t i = 0; i < 4; ++i) {
        EXPECT_EQ(results[RequestId{i}].tokens, alone[i].tokens) << i;
        EXPECT_EQ(results[RequestId{i}].last.n_cached_prompt_tokens, i == 0 ? 0 : shareable) << i;
    }
    EXPECT_EQ(core->stats().n_prefix_hit_tokens, 3 * shareable);
    EXPECT_EQ(core->n_free_blocks(), core->kv_plan().n_blocks);
}

}  // namespace
}  // namespace ladder::engine::testing
