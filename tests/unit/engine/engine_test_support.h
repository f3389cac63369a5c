// The default model loaded once for the engine tests, and a way to run
// requests through an EngineCore to the end.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ladder/engine/engine_core.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/util/thread_pool.h"

namespace ladder::engine::testing {

inline std::string model_path(const char* file_name) {
    return (std::filesystem::path(LADDER_SOURCE_DIR) / "models" / file_name).string();
}
inline std::string default_model_path() { return model_path("SmolLM2-135M-Instruct.Q4_1.gguf"); }

// A model loaded once per test binary, shared by its suites; null when the
// file has not been fetched.
inline ModelBundle* shared_model(const std::string& path) {
    static std::map<std::string, std::unique_ptr<ModelBundle>> loaded;
    auto it = loaded.find(path);
    if (it == loaded.end()) {
        std::unique_ptr<ModelBundle> bundle;
        if (std::filesystem::exists(path)) {
            bundle = std::make_unique<ModelBundle>(load_model_bundle(path));
        }
        it = loaded.emplace(path, std::move(bundle)).first;
    }
    return it->second.get();
}
// Greedy decoding of exactly max_tokens tokens (EOS does not end it), so a
// request's length does not depend on what the model writes.
inline RequestParams greedy_to_length(std::vector<TokenId> prompt, int32_t max_tokens) {
    RequestParams params;
    params.prompt = std::move(prompt);
    params.sampling.temperature = 0.0f;
    params.max_tokens = max_tokens;
    params.ignore_eos = true;
    return params;
}

inline util::ThreadPool& shared_pool() {
    static util::ThreadPool pool(2);
    return pool;
}

// What one request produced, gathered from its outputs.
struct Collected {
    std::vector<TokenId> tokens;
    std::string text;
    std::vector<TokenLogprob> logprobs;
    std::optional<FinishReason> finish_reason;
    int n_outputs_after_finish = 0;
    RequestOutput last;
};

class EngineTest : public ::testing::Test {
public:
    static void SetUpTestSuite() {
        bundle_ = shared_model(default_model_path());
        pool_ = &shared_pool();
    }
    void SetUp() override {
        if (bundle_ == nullptr) GTEST_SKIP() << "default model not present; run `make model`";
    }

    static std::unique_ptr<EngineCore> make_core(EngineConfig config) {
        return std::make_unique<EngineCore>(*bundle_->model, *bundle_->tokenizer, *pool_, config);
    }
    static std::vector<TokenId> encode(const std::string& text) {
        return bundle_->tokenizer->encode(text, true, false);
    }
    // A sink that gathers into results[id].
    static OutputSink collect_into(std::map<RequestId, Collected>& results, RequestId id) {
        return [&results, id](RequestOutput&& output) {
            Collected& c = results[id];
            if (c.finish_reason) ++c.n_outputs_after_finish;
            c.tokens.insert(c.tokens.end(), output.token_ids.begin(), output.token_ids.end());
            c.text += output.text;
            for (TokenLogprob& lp : output.logprobs) c.logprobs.push_back(std::move(lp));
            c.finish_reason = output.finish_reason;
            c.last = std::move(output);
        };
    }
    static void run_to_end(EngineCore& core) {
        for (int guard = 0; core.has_work(); ++guard) {
            ASSERT_LT(guard, 100000) << "the engine made no progress";
            core.step();
        }
    }
    // The request alone in an engine with room to spare.
    static Collected run_alone(const RequestParams& params, int32_t max_batched_tokens = 512) {
        auto core = make_core({.max_num_seqs = 1, .max_num_batched_tokens = max_batched_tokens});
        std::map<RequestId, Collected> results;
        core->add_request(RequestId{1}, params, collect_into(results, RequestId{1}));
        run_to_end(*core);
        return results[RequestId{1}];
    }

    static ModelBundle* bundle_;
    static util::ThreadPool* pool_;
};

inline ModelBundle* EngineTest::bundle_ = nullptr;
inline util::ThreadPool* EngineTest::pool_ = nullptr;

}  // namespace ladder::engine::testing
