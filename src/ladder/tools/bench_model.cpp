#include "ladder/tools/bench_model.h"

#include <chrono>
#include <random>

#include "ladder/engine/session.h"
#include "ladder/model/model.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::tools {

namespace {

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::vector<int32_t> random_tokens(int32_t n, int32_t vocab_size) {
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int32_t> pick(0, vocab_size - 1);
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& token : tokens) token = pick(rng);
    return tokens;
}

// One forward pass over the whole prompt: the session's batch limit is the
// prompt itself, so it is not split into chunks.
int64_t time_prompt(engine::Session& session, const std::vector<int32_t>& prompt) {
    session.reset();
    const int64_t start = now_ns();
    session.append(prompt);
    return now_ns() - start;
}

int64_t time_generation(engine::Session& session, const std::vector<int32_t>& tokens) {
    session.reset();
    const int64_t start = now_ns();
    for (const int32_t token : tokens) session.append({&token, 1});
    return now_ns() - start;
}

template <typename TimeOnce>
ModelBenchTest run_test(int32_t n_prompt, int32_t n_gen, int32_t n_repetitions,
                        TimeOnce time_once) {
    ModelBenchTest test;
    test.n_prompt = n_prompt;
    test.n_gen = n_gen;
    time_once();  // warm-up: weights paged in and cached, scratch grown, threads awake
    for (int32_t i = 0; i < n_repetitions; ++i) test.samples_ns.push_back(time_once());
    return test;
}

}  // namespace

void validate_model_bench_options(const ModelBenchOptions& options, int32_t context_length) {
    if (options.n_prompt < 0 || options.n_gen < 0) util::fail("-p and -n must not be negative");
    if (options.n_prompt == 0 && options.n_gen == 0) {
        util::fail("nothing to measure: -p and -n are both 0");
    }
    if (options.n_repetitions < 1) util::fail("-r must be at least 1");
    if (options.n_prompt > context_length || options.n_gen > context_length) {
        util::fail("-p {} / -n {} exceed the model's context of {} tokens", options.n_prompt,
                   options.n_gen, context_length);
    }
}

std::string ModelBenchTest::name() const {
    return n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
}

std::vector<double> ModelBenchTest::samples_tokens_per_second() const {
    std::vector<double> out;
    for (const int64_t ns : samples_ns) out.push_back(1e9 * n_tokens() / static_cast<double>(ns));
    return out;
}

std::vector<ModelBenchTest> bench_model(model::Model& model, util::ThreadPool& pool,
                                        const ModelBenchOptions& options) {
    validate_model_bench_options(options, model.config().context_length);
    std::vector<ModelBenchTest> tests;
    const int32_t vocab_size = model.config().vocab_size;
    if (options.n_prompt > 0) {
        const std::vector<int32_t> prompt = random_tokens(options.n_prompt, vocab_size);
        engine::Session session(model, pool, options.n_prompt, options.n_prompt);
        tests.push_back(run_test(options.n_prompt, 0, options.n_repetitions,
                                 [&] { return time_prompt(session, prompt); }));
    }
    if (options.n_gen > 0) {
        const std::vector<int32_t> tokens = random_tokens(options.n_gen, vocab_size);
        engine::Session session(model, pool, options.n_gen);
        tests.push_back(run_test(0, options.n_gen, options.n_repetitions,
                                 [&] { return time_generation(session, tokens); }));
    }
    return tests;
}

}  // namespace ladder::tools
