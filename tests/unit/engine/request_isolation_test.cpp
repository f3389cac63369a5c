// What keeps one request from hurting the others: a failure while handling it
// ends only it (FinishReason::Error, its blocks freed), its cache salt keeps
// its prefix blocks its own, and the lists it may bring are bounded.
#include <gtest/gtest.h>

#include <new>
#include <thread>

#include "engine_test_support.h"
#include "ladder/engine/engine.h"
#include "ladder/util/error.h"

namespace ladder::engine::testing {
namespace {

// Collects like collect_into, but throws std::bad_alloc on its n-th output
// (a failed allocation while the engine hands this request its tokens).
OutputSink failing_sink(std::map<RequestId, Collected>& results, RequestId id, int fail_at) {
    auto calls = std::make_shared<int>(0);
    OutputSink collect = EngineTest::collect_into(results, id);
    return [collect, calls, fail_at](RequestOutput&& output) {
        if (++*calls == fail_at) throw std::bad_alloc();
        collect(std::move(output));
    };
}

TEST_F(EngineTest, AFailureInOneRequestEndsOnlyThatRequest) {
    const RequestParams a = greedy_to_length(encode("The first of three requests"), 10);
    const RequestParams b = greedy_to_length(encode("The second request, run beside it"), 10);
    const RequestParams c = greedy_to_length(encode("And a third one"), 10);
    const Collected b_alone = run_alone(b);
    const Collected c_alone = run_alone(c);

    auto core = make_core({.max_num_seqs = 4});
    std::map<RequestId, Collected> results;
    core->add_request(RequestId{1}, a, failing_sink(results, RequestId{1}, 3));
    core->add_request(RequestId{2}, b, collect_into(results, RequestId{2}));
    core->add_request(RequestId{3}, c, collect_into(results, RequestId{3}));
    run_to_end(*core);

    const Collected& failed = results[RequestId{1}];
    EXPECT_EQ(failed.finish_reason, FinishReason::Error);
    EXPECT_EQ(failed.last.error, std::bad_alloc().what());
    EXPECT_EQ(failed.tokens.size(), 2u) << "the outputs before the failure were delivered";
    EXPECT_EQ(failed.n_outputs_after_finish, 0);
    EXPECT_EQ(results[RequestId{2}].tokens, b_alone.tokens);
    EXPECT_EQ(results[RequestId{3}].tokens, c_alone.tokens);
    EXPECT_EQ(results[RequestId{2}].finish_reason, FinishReason::Length);
    EXPECT_EQ(core->stats().n_failed, 1);
    EXPECT_TRUE(core->all_blocks_free());

    // The engine goes on: the same request again runs to the end.
    core->add_request(RequestId{4}, a, collect_into(results, RequestId{4}));
    run_to_end(*core);
    EXPECT_EQ(results[RequestId{4}].finish_reason, FinishReason::Length);
    EXPECT_EQ(results[RequestId{4}].tokens, run_alone(a).tokens);
}

TEST_F(EngineTest, AFailureOnTheLastOutputStillEndsTheRequest) {
    auto core = make_core({.max_num_seqs = 2});
    std::map<RequestId, Collected> results;
    // Output 4 is the last (max_tokens 4): it throws, and so does nothing else.
    core->add_request(RequestId{1}, greedy_to_length(encode("Short"), 4),
                      failing_sink(results, RequestId{1}, 4));
    core->add_request(RequestId{2}, greedy_to_length(encode("Beside it"), 6),
                      collect_into(results, RequestId{2}));
    run_to_end(*core);
    EXPECT_EQ(results[RequestId{1}].tokens.size(), 3u);
    EXPECT_EQ(results[RequestId{2}].tokens.size(), 6u);
    EXPECT_TRUE(core->all_blocks_free());
    EXPECT_FALSE(core->has_work());
}

TEST_F(EngineTest, TheEngineThreadOutlivesAFailingRequest) {
    util::ThreadPool engine_pool(2);
    Engine engine(*bundle_->model, *bundle_->tokenizer, engine_pool, {});
    std::map<RequestId, Collected> failed;
    engine.submit(greedy_to_length(encode("This one fails"), 8),
                  failing_sink(failed, RequestId{0}, 2));
    auto [id, stream] = engine.submit(greedy_to_length(encode("This one does not"), 8));
    int n_tokens = 0;
    std::optional<FinishReason> finish;
    while (!finish) {
        std::optional<RequestOutput> output = stream->next(std::chrono::milliseconds(60000));
        ASSERT_TRUE(output.has_value()) << "the engine thread stopped answering";
        n_tokens += static_cast<int>(output->token_ids.size());
        finish = output->finish_reason;
    }
    EXPECT_EQ(finish, FinishReason::Length);
    EXPECT_EQ(n_tokens, 8);
    // The stats snapshot follows the step that ended the failed request.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (engine.stats().n_failed == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(engine.stats().n_failed, 1);
}

// Runs the prompt in the core and returns how many prompt tokens came from the cache.
int32_t cached_tokens(EngineCore& core, const RequestParams& params, RequestId id) {
    std::map<RequestId, Collected> results;
    core.add_request(id, params, EngineTest::collect_into(results, id));
    EngineTest::run_to_end(core);
    return results[id].last.n_cached_prompt_tokens;
}

TEST_F(EngineTest, CacheSaltsKeepPrefixBlocksApart) {
    auto core = make_core({.max_num_seqs = 4});
    RequestParams params = greedy_to_length(
        encode("A system prompt long enough to fill a few blocks of sixteen tokens, shared by "
               "every request of one tenant: be polite, answer briefly, cite the manual, and "
               "never promise a delivery date to a customer who asks for one."),
        2);
    const int32_t shareable = (static_cast<int32_t>(params.prompt.size()) - 1) / 16 * 16;
    ASSERT_GE(shareable, 32);
    params.cache_salt = "tenant A";
    EXPECT_EQ(cached_tokens(*core, params, RequestId{1}), 0);
    EXPECT_EQ(cached_tokens(*core, params, RequestId{2}), shareable) << "the same salt hits";
    RequestParams other = params;
    other.cache_salt = "tenant B";
    EXPECT_EQ(cached_tokens(*core, other, RequestId{3}), 0) << "another salt must not hit";
    RequestParams unsalted = params;
    unsalted.cache_salt.clear();
    EXPECT_EQ(cached_tokens(*core, unsalted, RequestId{4}), 0) << "nor the unsalted cache";
    EXPECT_EQ(cached_tokens(*core, unsalted, RequestId{5}), shareable);
    EXPECT_EQ(cached_tokens(*core, params, RequestId{6}), shareable);
}

TEST_F(EngineTest, RefusesListsPastTheirBounds) {
    auto core = make_core({});
    auto refused = [&](const RequestParams& params) {
        try {
            core->validate(params);
        } catch (const util::InputError&) {
            return true;
        }
        return false;
    };
    const RequestParams base = greedy_to_length(encode("hi"), 4);
    RequestParams p = base;
    p.stop = StopStrings(std::vector<std::string>(kMaxStopStrings + 1, "x"));
    EXPECT_TRUE(refused(p));
    p = base;
    p.stop = StopStrings({std::string(kMaxStopStringBytes + 1, 'x')});
    EXPECT_TRUE(refused(p));
    p = base;
    std::set<TokenId> ids;
    for (TokenId id = 0; id <= static_cast<TokenId>(kMaxStopTokenIds); ++id) ids.insert(id);
    p.stop_token_ids = ids;
    EXPECT_TRUE(refused(p));
    p = base;
    LogitBias bias;
    for (TokenId id = 0; id <= static_cast<TokenId>(kMaxLogitBiasEntries); ++id)
        bias.emplace_back(id, 1.0f);
    p.logit_bias = bias;
    EXPECT_TRUE(refused(p));
    bias.pop_back();
    p.logit_bias = bias;
    EXPECT_FALSE(refused(p));
}

}  // namespace
}  // namespace ladder::engine::testing
