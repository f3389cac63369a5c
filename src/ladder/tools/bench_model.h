// `ladder bench-model`'s timing, as llama-bench runs its tests: prompt
// processing (pp: one forward pass over n_prompt tokens into an empty KV
// cache) and text generation (tg: n_gen forward passes of one token each,
// from an empty cache), each once to warm up and then n_repetitions times.
// Tokens are random ids, as llama-bench's are: speed does not depend on them.
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
};

struct ModelBenchTest {
    int32_t n_prompt = 0;  // a pp test has n_gen 0, a tg test n_prompt 0
    int32_t n_gen = 0;
    std::vector<int64_t> samples_ns;  // one per repetition

    std::string name() const;  // "pp512", "tg128"
    int32_t n_tokens() const { return n_prompt + n_gen; }
    std::vector<double> samples_tokens_per_second() const;
};

// Throws util::InputError when a test needs more tokens than the model's
// context, both tests are off, or a count is out of range: callers check
// before they spend seconds measuring the machine.
void validate_model_bench_options(const ModelBenchOptions& options, int32_t context_length);

// The pp test first, then tg (options validated as above).
std::vector<ModelBenchTest> bench_model(model::Model& model, util::ThreadPool& pool,
                                        const ModelBenchOptions& options);

}  // namespace ladder::tools
