#include "ladder/tools/bench_model.h"

#include <algorithm>
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

std::vector<int32_t> random_tokens(int32_t n, int32_t vocab_size, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> pick(0, vocab_size - 1);
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& token : tokens) token = pick(rng);
    return tokens;
}

// The depth is computed once per test; each run drops what the last one added
// (its KV stays valid up to the depth) and times its own tokens on top.
void keep_depth(engine::Session& session, const std::vector<int32_t>& depth) {
    if (session.n_tokens() < static_cast<int32_t>(depth.size())) {
        session.reset();
        if (!depth.empty()) session.append(depth);
    }
    session.truncate(static_cast<int32_t>(depth.size()));
}

// One forward pass over the whole prompt: the session's batch limit is the
// prompt itself, so it is not split into chunks.
int64_t time_prompt(engine::Session& session, const std::vector<int32_t>& depth,
                    const std::vector<int32_t>& prompt) {
    keep_depth(session, depth);
    const int64_t start = now_ns();
    session.append(prompt);
    return now_ns() - start;
}

int64_t time_generation(engine::Session& session, const std::vector<int32_t>& depth,
                        const std::vector<int32_t>& tokens) {
    keep_depth(session, depth);
    const int64_t start = now_ns();
    for (const int32_t token : tokens) session.append({&token, 1});
    return now_ns() - start;
}

template <typename TimeOnce>
ModelBenchTest run_test(int32_t n_prompt, int32_t n_gen, int32_t n_depth, int32_t n_repetitions,
                        TimeOnce time_once) {
    ModelBenchTest test;
    test.n_prompt = n_prompt;
    test.n_gen = n_gen;
    test.n_depth = n_depth;
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
    if (options.n_depths.empty()) util::fail("-d needs at least one depth");
    for (const int32_t depth : options.n_depths) {
        if (depth < 0) util::fail("-d must not be negative");
        const int64_t longest = int64_t{depth} + std::max(options.n_prompt, options.n_gen);
        if (longest > context_length) {
            util::fail("-d {} with -p {} / -n {} exceeds the model's context of {} tokens", depth,
                       options.n_prompt, options.n_gen, context_length);
        }
    }
}

std::string ModelBenchTest::name() const {
    std::string name = n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
    if (n_depth > 0) name += " @ d" + std::to_string(n_depth);
    return name;
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
    for (const int32_t n_depth : options.n_depths) {
        const std::vector<int32_t> depth = random_tokens(n_depth, vocab_size, 99);
        if (options.n_prompt > 0) {
            const std::vector<int32_t> prompt = random_tokens(options.n_prompt, vocab_size, 1234);
            engine::Session session(model, pool, n_depth + options.n_prompt, options.n_prompt);
            tests.push_back(run_test(options.n_prompt, 0, n_depth, options.n_repetitions,
                                     [&] { return time_prompt(session, depth, prompt); }));
        }
        if (options.n_gen > 0) {
            const std::vector<int32_t> tokens = random_tokens(options.n_gen, vocab_size, 1234);
            engine::Session session(model, pool, n_depth + options.n_gen);
            tests.push_back(run_test(0, options.n_gen, n_depth, options.n_repetitions,
                                     [&] { return time_generation(session, depth, tokens); }));
        }
    }
    return tests;
}

}  // namespace ladder::tools
