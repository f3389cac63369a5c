// The sampler's time per token on one core, over SmolLM2's vocabulary
// (49,152) and Gemma 3's (262,144), for the parameter sets users send: greedy,
// OpenAI's default (temperature 1, nothing else), a nucleus (temperature 0.7,
// top_p 0.9) and llama.cpp's CLI defaults (top_k 40, top_p 0.95, min_p 0.05,
// temperature 0.8). The logits are normal with a spread of 3, about a small
// model's; each iteration copies them back first (sample() penalizes in
// place), which the copy-only case measures.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ladder/engine/sampler.h"

namespace {

using ladder::engine::Sampler;
using ladder::engine::SamplingParams;
using ladder::engine::TokenId;

struct Case {
    const char* name;
    float temperature;
    int32_t top_k;
    float top_p;
    float min_p;
};

constexpr Case kCases[] = {
    {"greedy", 0.0f, 0, 1.0f, 0.0f},
    {"temperature_1", 1.0f, 0, 1.0f, 0.0f},
    {"top_p_0.9", 0.7f, 0, 0.9f, 0.0f},
    {"llama_cpp_defaults", 0.8f, 40, 0.95f, 0.05f},
};

std::vector<float> normal_logits(size_t vocab_size) {
    std::mt19937 gen(1);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> logits(vocab_size);
    for (float& l : logits) l = normal(gen);
    return logits;
}

void sample(benchmark::State& state, const Case& c, bool copy_only) {
    const std::vector<float> logits = normal_logits(static_cast<size_t>(state.range(0)));
    std::vector<float> working(logits.size());
    SamplingParams params;
    params.temperature = c.temperature;
    params.top_k = c.top_k;
    params.top_p = c.top_p;
    params.min_p = c.min_p;
    params.seed = 1;
    Sampler sampler(params);
    int64_t position = 0;
    for (auto _ : state) {
        std::copy(logits.begin(), logits.end(), working.begin());
        if (!copy_only) benchmark::DoNotOptimize(sampler.sample(working, {}, position++));
        benchmark::ClobberMemory();
    }
}

void register_all() {
    for (const Case& c : kCases) {
        benchmark::RegisterBenchmark((std::string("sample/") + c.name).c_str(),
                                     [&c](benchmark::State& state) { sample(state, c, false); })
            ->Arg(49152)
            ->Arg(262144)
            ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark("sample/copy_only",
                                 [](benchmark::State& state) { sample(state, kCases[0], true); })
        ->Arg(49152)
        ->Arg(262144)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
