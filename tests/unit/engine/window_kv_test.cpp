// Gemma 3's sliding-window layers in a KV group of their own: blocks the
// window has passed are given back while the sequence runs, and the outputs
// (greedy, past the window, with prefix-cache hits) are the ones computed
// with every layer keeping every block.
#include <gtest/gtest.h>

#include "engine_test_support.h"

namespace ladder::engine::testing {
namespace {

class WindowKvTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        bundle_ = shared_model(model_path("gemma-3-270m-q4_k_m.gguf"));
        pool_ = &shared_pool();
    }
    void SetUp() override {
        if (bundle_ == nullptr) GTEST_SKIP() << "Gemma 3 not present; run `make model-gemma3`";
    }
    static std::unique_ptr<EngineCore> make_core(EngineConfig config) {
        config.max_model_len = 2048;
        config.kv_cache_bytes = int64_t{64} << 20;
        return std::make_unique<EngineCore>(*bundle_->model, *bundle_->tokenizer, *pool_, config);
    }
    // A prompt past the 512-token window.
    static std::vector<TokenId> long_prompt(int n_tokens, int seed) {
        std::vector<TokenId> prompt{*bundle_->tokenizer->vocabulary().bos_id};
        for (int i = 0; static_cast<int>(prompt.size()) < n_tokens; ++i) {
            const std::string sentence =
                "Sentence " + std::to_string(i * 7 + seed) + " tells of the river and the mill. ";
            const auto ids = bundle_->tokenizer->encode(sentence, false, false);
            prompt.insert(prompt.end(), ids.begin(), ids.end());
        }
        prompt.resize(static_cast<size_t>(n_tokens));
        return prompt;
    }
    static ModelBundle* bundle_;
    static util::ThreadPool* pool_;
};

ModelBundle* WindowKvTest::bundle_ = nullptr;
util::ThreadPool* WindowKvTest::pool_ = nullptr;

TEST_F(WindowKvTest, WindowBlocksAreFreedAndOutputsAreUnchanged) {
    EngineConfig one_group;
    one_group.window_kv_group = false;
    auto reference = make_core(one_group);
    auto split = make_core({});
    ASSERT_EQ(reference->kv_plan().n_window_blocks, 0);
    ASSERT_GT(split->kv_plan().n_window_blocks, 0);
    ASSERT_EQ(split->kv_plan().window, 512);

    // Two requests share their first 640 tokens; the second comes after the
    // first, so it reuses the prefix through the prefix cache.
    const std::vector<TokenId> shared = long_prompt(640, 0);
    std::vector<TokenId> second_prompt = shared;
    const std::vector<TokenId> tail = long_prompt(40, 99);
    second_prompt.insert(second_prompt.end(), tail.begin() + 1, tail.end());
    const std::vector<RequestParams> requests{greedy_to_length(shared, 6),
                                              greedy_to_length(second_prompt, 6)};

    std::map<RequestId, Collected> expected;
    std::map<RequestId, Collected> got;
    int32_t peak_window_blocks = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        const RequestId id{i};
        reference->add_request(id, requests[i], EngineTest::collect_into(expected, id));
        EngineTest::run_to_end(*reference);
        split->add_request(id, requests[i], EngineTest::collect_into(got, id));
        while (split->has_work()) {
            split->step();
            peak_window_blocks = std::max(peak_window_blocks, split->stats().n_window_blocks_used);
        }
    }
    for (size_t i = 0; i < requests.size(); ++i) {
        EXPECT_EQ(got[RequestId{i}].tokens, expected[RequestId{i}].tokens) << i;
    }
    // The second request found the shared blocks in both groups.
    EXPECT_EQ(got[RequestId{1}].last.n_cached_prompt_tokens, 640);
    // The window group never held much more than a window and a step's chunk.
    const int32_t bound = (512 + 512) / 16 + 2;
    EXPECT_LE(peak_window_blocks, bound);
    EXPECT_LT(peak_window_blocks, 680 / 16);  // less than all of the sequence
    EXPECT_TRUE(split->all_blocks_free());
}

}  // namespace
}  // namespace ladder::engine::testing
