// The engine on its own thread: requests submitted from several threads all
// finish with the outputs they give alone; abort and shutdown end streams.
#include <gtest/gtest.h>

#include <thread>

#include "engine_test_support.h"
#include "ladder/engine/engine.h"
#include "ladder/util/error.h"

namespace ladder::engine::testing {
namespace {

using std::chrono::milliseconds;

// Reads a stream to its last output.
Collected drain(RequestStream& stream) {
    std::map<RequestId, Collected> results;
    const RequestId id{0};
    OutputSink sink = EngineTest::collect_into(results, id);
    while (!results[id].finish_reason) {
        std::optional<RequestOutput> output = stream.next(milliseconds(60000));
        if (!output) break;
        sink(std::move(*output));
    }
    return results[id];
}

RequestParams request(const std::vector<TokenId>& prompt, int32_t max_tokens, uint64_t seed) {
    RequestParams params;
    params.prompt = prompt;
    params.max_tokens = max_tokens;
    params.sampling.temperature = 0.7f;
    params.sampling.seed = seed;
    params.ignore_eos = true;
    return params;
}

class EngineThreadTest : public EngineTest {};

TEST_F(EngineThreadTest, ConcurrentSubmittersGetTheirOwnOutputs) {
    const std::vector<TokenId> prompt = encode("Many clients, one engine:");
    std::vector<Collected> alone;
    for (uint64_t seed = 0; seed < 6; ++seed) alone.push_back(run_alone(request(prompt, 8, seed)));

    util::ThreadPool engine_pool(2);
    Engine engine(*bundle_->model, *bundle_->tokenizer, engine_pool, {});
    std::vector<Collected> got(6);
    std::vector<std::thread> clients;
    for (uint64_t seed = 0; seed < 6; ++seed) {
        clients.emplace_back([&, seed] {
            auto [id, stream] = engine.submit(request(prompt, 8, seed));
            got[seed] = drain(*stream);
        });
    }
    for (std::thread& client : clients) client.join();
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].tokens, alone[i].tokens) << i;
        EXPECT_EQ(got[i].finish_reason, FinishReason::Length);
    }
    EXPECT_EQ(engine.n_in_flight(), 0);
}

TEST_F(EngineThreadTest, SubmitRefusesBadRequestsAtOnce) {
    util::ThreadPool engine_pool(1);
    Engine engine(*bundle_->model, *bundle_->tokenizer, engine_pool, {});
    EXPECT_THROW(engine.submit(request({}, 4, 0)), util::InputError);
    EXPECT_EQ(engine.n_in_flight(), 0);
}

TEST_F(EngineThreadTest, AbortFromAnotherThreadEndsTheStreamAndFreesBlocks) {
    util::ThreadPool engine_pool(2);
    Engine engine(*bundle_->model, *bundle_->tokenizer, engine_pool, {});
    auto [id, stream] = engine.submit(request(encode("Go on forever"), 4000, 1));
    ASSERT_TRUE(stream->next(milliseconds(60000)).has_value());  // it is decoding
    engine.abort(id);
    const Collected rest = drain(*stream);
    EXPECT_EQ(rest.finish_reason, FinishReason::Abort);
    for (int i = 0; i < 1000 && engine.stats().n_blocks_used > 0; ++i) {
        std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ(engine.stats().n_blocks_used, 0);
    EXPECT_EQ(engine.n_in_flight(), 0);
}

TEST_F(EngineThreadTest, ShutdownEndsEveryStreamWithAbort) {
    std::shared_ptr<RequestStream> stream;
    {
        util::ThreadPool engine_pool(2);
        Engine engine(*bundle_->model, *bundle_->tokenizer, engine_pool, {});
        stream = engine.submit(request(encode("Still running at shutdown"), 4000, 2)).second;
        ASSERT_TRUE(stream->next(milliseconds(60000)).has_value());
    }
    EXPECT_EQ(drain(*stream).finish_reason, FinishReason::Abort);
}

}  // namespace
}  // namespace ladder::engine::testing
