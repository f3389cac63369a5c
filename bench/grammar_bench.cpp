// Structured output's costs on a model's vocabulary: preparing the vocabulary
// (once per model), compiling each schema, and the mask per token while a
// random walk writes a document each schema accepts (random logits, the best
// allowed token taken). Prints one JSON object; docs/performance.md quotes it.
//
//   grammar_bench MODEL.gguf SCHEMAS.json   (SCHEMAS.json: {"name": schema, ...})
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "ladder/engine/grammar_compiler.h"
#include "ladder/engine/tokenizer_loader.h"
#include "ladder/gguf/gguf_file.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace ladder;

double microseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
    return values[index];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: grammar_bench MODEL.gguf SCHEMAS.json\n";
        return 2;
    }
    const auto file = gguf::GgufFile::open(argv[1]);
    const auto tokenizer = engine::load_tokenizer(*file);
    const json schemas = json::parse(std::ifstream(argv[2]));
    engine::GrammarCompiler compiler(*tokenizer);

    Clock::time_point start = Clock::now();
    compiler.compile({engine::GrammarSpec::Kind::Regex, "a", true});
    const double vocabulary_ms = microseconds_since(start) / 1000.0;

    std::vector<double> compile_ms, mask_us;
    std::mt19937 random(1);
    std::normal_distribution<float> noise;
    std::vector<float> logits(static_cast<size_t>(tokenizer->vocab_size()));
    for (const auto& [name, schema] : schemas.items()) {
        start = Clock::now();
        const auto grammar =
            compiler.compile({engine::GrammarSpec::Kind::JsonSchema, schema.dump()});
        compile_ms.push_back(microseconds_since(start) / 1000.0);
        for (int walk = 0; walk < 3; ++walk) {
            const auto constraint = engine::GrammarCompiler::make_constraint(grammar);
            for (int step = 0; step < 256 && !constraint->is_terminated(); ++step) {
                for (float& logit : logits) logit = noise(random);
                start = Clock::now();
                constraint->apply_mask(logits);
                mask_us.push_back(microseconds_since(start));
                const auto best = std::max_element(logits.begin(), logits.end());
                if (!std::isfinite(*best)) break;
                if (!constraint->accept(static_cast<int32_t>(best - logits.begin()))) break;
            }
        }
    }
    std::cout << json{{"vocab_size", tokenizer->vocab_size()},
                      {"schemas", compile_ms.size()},
                      {"vocabulary_prepare_ms", vocabulary_ms},
                      {"compile_ms_p50", percentile(compile_ms, 0.5)},
                      {"compile_ms_p99", percentile(compile_ms, 0.99)},
                      {"compile_ms_max", percentile(compile_ms, 1.0)},
                      {"masks", mask_us.size()},
                      {"mask_us_p50", percentile(mask_us, 0.5)},
                      {"mask_us_p99", percentile(mask_us, 0.99)}}
                     .dump()
              << "\n";
}
