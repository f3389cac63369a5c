// A seeded fuzz loop over the chat template interpreter, run on every build:
// the libFuzzer target's seed corpus (tests/fuzz/corpus/chat_template/) and
// its crash regressions,
// mutated with Jinja syntax, random bytes and splices. Every input must end
// in a rendering or an InputError, never a crash or a hang. `make fuzz` runs
// the same inputs through libFuzzer for longer.
#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../fuzz/chat_template_fuzz_input.h"
#include "jinja_test_support.h"

namespace ladder::tokenizer {
namespace {

constexpr std::array<std::string_view, 34> kJinjaPieces = {
    "{{",
    "}}",
    "{%",
    "%}",
    "{%-",
    "-%}",
    "{#",
    "#}",
    "{% for x in messages %}",
    "{% endfor %}",
    "{% if ",
    "{% else %}",
    "{% endif %}",
    "{% set ns = namespace(a=1) %}",
    "{% macro m(a) %}",
    "{% endmacro %}",
    "{{ m(m) }}",
    "| tojson(indent=2)",
    "| map(attribute='content')",
    "| selectattr('role', 'equalto', 'user')",
    "[::-1]",
    "[1:-1]",
    " ~ ",
    " in ",
    "loop.index0",
    "loop.cycle(1, 2)",
    "raise_exception('x')",
    "strftime_now('%Y')",
    "range(1000)",
    "'\\u00e9\\x00'",
    "\"",
    "(",
    "]",
    "\0"};

// The seed corpus and the inputs that once crashed (tests/fuzz/regressions/).
std::vector<std::string> seed_corpus() {
    std::vector<std::string> seeds;
    for (const char* dir :
         {"tests/fuzz/corpus/chat_template", "tests/fuzz/regressions/chat_template"}) {
        for (const auto& entry : std::filesystem::directory_iterator(test::kSourceDir / dir)) {
            seeds.push_back(test::read_source_file(
                std::filesystem::relative(entry.path(), test::kSourceDir).string()));
        }
    }
    std::sort(seeds.begin(), seeds.end());  // the same order on every file system
    return seeds;
}

std::string mutate(std::string input, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
    const auto below = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
    const int n_mutations = 1 + static_cast<int>(below(4));
    for (int i = 0; i < n_mutations; ++i) {
        const size_t at = below(input.size() + 1);
        switch (below(5)) {
            case 0:  // a Jinja piece where it may not belong
                input.insert(at, kJinjaPieces[below(kJinjaPieces.size())]);
                break;
            case 1:  // a random byte
                if (!input.empty()) input[below(input.size())] = static_cast<char>(rng());
                break;
            case 2:  // a range dropped
                input.erase(at, below(64));
                break;
            case 3:  // a range repeated
                input.insert(at, input.substr(below(input.size()), below(128)));
                break;
            default: {  // the head of another seed spliced in
                const std::string& other = seeds[below(seeds.size())];
                input = input.substr(0, at) + other.substr(below(other.size()));
            }
        }
    }
    return input;
}

TEST(ChatTemplateFuzz, seeded_mutations_of_real_templates_never_crash) {
    const std::vector<std::string> seeds = seed_corpus();
    ASSERT_GE(seeds.size(), 10u);
    for (const std::string& seed : seeds) {
        fuzz::render_fuzz_input(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    }
    std::mt19937_64 rng(14);
    constexpr int kIterations = 4000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kIterations; ++i) {
        const std::string input = mutate(seeds[rng() % seeds.size()], seeds, rng);
        const auto before = std::chrono::steady_clock::now();
        fuzz::render_fuzz_input(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        // The limits bound every input: none may take long.
        EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5))
            << "iteration " << i;
    }
    RecordProperty("seconds", static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(
                                                   std::chrono::steady_clock::now() - start)
                                                   .count()));
}

}  // namespace
}  // namespace ladder::tokenizer
