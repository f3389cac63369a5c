// `ladder bench-model`'s timing, as llama-bench runs its tests: prompt
// processing (pp: one forward pass over n_prompt tokens) and text generation
// (tg: n_gen forward passes of one token each), each on top of n_depth tokens
// already in the KV cache (llama-bench's -d: the depth is filled by an untimed
// prompt pass first), once to warm up and then n_repetitions times. Tokens are
// random ids, as llama-bench's are: speed does not depend on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder::model {
class Model;
}
namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct ModelBenchOptions {
    int32_t n_prompt = 512;  // 0: no pp test
    int32_t n_gen = 128;     // 0: no tg test
    int32_t n_repetitions = 5;
    std::vector<int32_t> n_depths = {0};  // each test runs at every depth
};

struct ModelBenchTest {
    int32_t n_prompt = 0;  // a pp test has n_gen 0, a tg test n_prompt 0
    int32_t n_gen = 0;
    int32_t n_depth = 0;              // tokens in the KV cache before the timed ones
    std::vector<int64_t> samples_ns;  // one per repetition

    std::string name() const;  // "pp512", "tg128", "pp512 @ d4096" (llama-bench's names)
    int32_t n_tokens() const { return n_prompt + n_gen; }
    std::vector<double> samples_tokens_per_second() const;
};

// Throws util::InputError when a test needs more tokens than the model's
// context (its depth included), both tests are off, or a count is out of
// range: callers check before they spend seconds measuring the machine.
void validate_model_bench_options(const ModelBenchOptions& options, int32_t context_length);

// For each depth in order, the pp test first, then tg (options validated as above).
std::vector<ModelBenchTest> bench_model(model::Model& model, util::ThreadPool& pool,
                                        const ModelBenchOptions& options);

}  // namespace ladder::tools
