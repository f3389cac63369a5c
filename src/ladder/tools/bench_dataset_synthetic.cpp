// The synthetic datasets: random and prefix, and make_dataset's dispatch.
#include <array>
#include <cmath>
#include <string_view>

#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/seeded_random.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

// Random token ids stay clear of the low ids, where vocabularies keep their
// special and byte tokens, and below 30,000, inside any vocabulary of 32k
// (Llama 2, Mistral) or more.
constexpr int64_t kFirstRandomTokenId = 1000;
constexpr int64_t kLastRandomTokenId = 29999;

// Common words that BPE vocabularies hold whole, so one word is about one
// token whatever the model.
constexpr std::array<std::string_view, 64> kWords = {
    "time",     "year",    "people",   "way",    "day",        "man",    "thing",   "woman",
    "life",     "child",   "world",    "school", "state",      "family", "student", "group",
    "country",  "problem", "hand",     "part",   "place",      "case",   "week",    "company",
    "system",   "program", "question", "work",   "government", "number", "night",   "point",
    "home",     "water",   "room",     "mother", "area",       "money",  "story",   "fact",
    "month",    "lot",     "right",    "study",  "book",       "eye",    "job",     "word",
    "business", "issue",   "side",     "kind",   "head",       "house",  "service", "friend",
    "father",   "power",   "hour",     "game",   "line",       "end",    "member",  "law"};

struct Lengths {
    int64_t input = 0;
    int64_t output = 0;
};

int64_t draw_length(SeededRandom& random, int64_t length, double range_ratio) {
    const auto low =
        std::max<int64_t>(1, static_cast<int64_t>(std::floor(length * (1.0 - range_ratio))));
    const auto high = std::max(low, static_cast<int64_t>(std::floor(length * (1.0 + range_ratio))));
    return random.between(low, high);
}

void check_synthetic_options(const DatasetOptions& options, const Lengths& defaults) {
    if (options.input_len.value_or(defaults.input) < 1)
        util::fail("--input-len must be at least 1");
    if (options.output_len.value_or(defaults.output) < 1) {
        util::fail("--output-len must be at least 1");
    }
    if (!(options.range_ratio >= 0.0 && options.range_ratio < 1.0)) {
        util::fail("--range-ratio must be in [0, 1), not {}", options.range_ratio);
    }
    if (options.prefix_len < 0) util::fail("--prefix-len must not be negative");
    if (options.n_prefixes < 1) util::fail("--num-prefixes must be at least 1");
}

// n random tokens in the endpoint's form: ids for completions, words for chat.
json random_tokens(SeededRandom& random, int64_t n, BenchEndpoint endpoint) {
    if (endpoint == BenchEndpoint::Completions) {
        json ids = json::array();
        for (int64_t i = 0; i < n; ++i) {
            ids.push_back(random.between(kFirstRandomTokenId, kLastRandomTokenId));
        }
        return ids;
    }
    std::string text;
    for (int64_t i = 0; i < n; ++i) {
        if (i > 0) text += ' ';
        text += kWords[static_cast<size_t>(random.between(0, kWords.size() - 1))];
    }
    return text;
}

json user_messages(json system_text, json user_text) {
    json messages = json::array();
    if (!system_text.is_null()) messages.push_back({{"role", "system"}, {"content", system_text}});
    messages.push_back({{"role", "user"}, {"content", std::move(user_text)}});
    return messages;
}

}  // namespace

int64_t estimate_tokens(const std::string& text) {
    if (text.empty()) return 0;
    return std::max<int64_t>(1, static_cast<int64_t>((text.size() + 3) / 4));
}

std::vector<BenchPrompt> random_dataset(const DatasetOptions& options) {
    const Lengths defaults{1024, 128};
    check_synthetic_options(options, defaults);
    SeededRandom random(options.seed);
    std::vector<BenchPrompt> prompts;
    for (int64_t i = 0; i < options.n_prompts; ++i) {
        BenchPrompt prompt;
        prompt.prompt_len =
            draw_length(random, options.input_len.value_or(defaults.input), options.range_ratio);
        prompt.max_tokens =
            draw_length(random, options.output_len.value_or(defaults.output), options.range_ratio);
        json tokens = random_tokens(random, prompt.prompt_len, options.endpoint);
        prompt.payload = options.endpoint == BenchEndpoint::Chat
                             ? user_messages(nullptr, std::move(tokens))
                             : std::move(tokens);
        prompts.push_back(std::move(prompt));
    }
    return prompts;
}

std::vector<BenchPrompt> prefix_dataset(const DatasetOptions& options) {
    const Lengths defaults{200, 300};
    check_synthetic_options(options, defaults);
    SeededRandom random(options.seed);
    std::vector<json> prefixes;
    for (int64_t i = 0; i < options.n_prefixes; ++i) {
        prefixes.push_back(random_tokens(random, options.prefix_len, options.endpoint));
    }
    std::vector<BenchPrompt> prompts;
    for (int64_t i = 0; i < options.n_prompts; ++i) {
        BenchPrompt prompt;
        // One block draws nothing, so its prompts are those of before there were more.
        const json& prefix = prefixes.size() == 1
                                 ? prefixes[0]
                                 : prefixes[random.between(0, options.n_prefixes - 1)];
        const int64_t question_len =
            draw_length(random, options.input_len.value_or(defaults.input), options.range_ratio);
        prompt.prompt_len = options.prefix_len + question_len;
        prompt.max_tokens =
            draw_length(random, options.output_len.value_or(defaults.output), options.range_ratio);
        json question = random_tokens(random, question_len, options.endpoint);
        if (options.endpoint == BenchEndpoint::Chat) {
            prompt.payload = user_messages(prefix, std::move(question));
        } else {
            prompt.payload = prefix;
            prompt.payload.insert(prompt.payload.end(), question.begin(), question.end());
        }
        prompts.push_back(std::move(prompt));
    }
    return prompts;
}

std::vector<BenchPrompt> make_dataset(const DatasetOptions& options) {
    if (options.n_prompts < 1) util::fail("--num-prompts must be at least 1");
    if (options.kind == "random") return random_dataset(options);
    if (options.kind == "prefix") return prefix_dataset(options);
    if (options.kind == "sharegpt" || options.kind == "jsonl") {
        if (options.path.empty()) util::fail("--dataset {} needs a FILE", options.kind);
        return options.kind == "sharegpt" ? sharegpt_dataset(options) : jsonl_dataset(options);
    }
    util::fail("unknown --dataset '{}': random, prefix, sharegpt FILE or jsonl FILE", options.kind);
}

}  // namespace ladder::tools
