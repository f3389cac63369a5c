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

// Token ids of random draws: ids as they are for completions; for chat,
// each draw is a word index, sent as the word.
json tokens_json(const std::vector<int32_t>& draws, BenchEndpoint endpoint) {
    if (endpoint == BenchEndpoint::Completions) return json(draws);
    std::string text;
    for (size_t i = 0; i < draws.size(); ++i) {
        if (i > 0) text += ' ';
        text += kWords[static_cast<size_t>(draws[i])];
    }
    return text;
}

json user_messages(json system_text, json user_text) {
    json messages = json::array();
    if (!system_text.is_null()) messages.push_back({{"role", "system"}, {"content", system_text}});
    messages.push_back({{"role", "user"}, {"content", std::move(user_text)}});
    return messages;
}

Lengths defaults_of(const std::string& kind) {
    return kind == "prefix" ? Lengths{200, 300} : Lengths{1024, 128};
}

}  // namespace

int64_t estimate_tokens(const std::string& text) {
    if (text.empty()) return 0;
    return std::max<int64_t>(1, static_cast<int64_t>((text.size() + 3) / 4));
}

SyntheticPrompts::SyntheticPrompts(const DatasetOptions& options)
    : options_(options), random_(options.seed) {
    if (options.kind != "random" && options.kind != "prefix") {
        util::fail("--dataset {} is not synthetic (random, prefix)", options.kind);
    }
    const Lengths defaults = defaults_of(options.kind);
    check_synthetic_options(options, defaults);
    input_len_ = options.input_len.value_or(defaults.input);
    output_len_ = options.output_len.value_or(defaults.output);
    if (options.kind == "prefix") {
        for (int64_t i = 0; i < options.n_prefixes; ++i) {
            draw_tokens(options.prefix_len, prefixes_.emplace_back());
        }
    }
}

void SyntheticPrompts::draw_tokens(int64_t n, std::vector<int32_t>& draws) {
    draws.resize(static_cast<size_t>(n));
    const bool ids = options_.endpoint == BenchEndpoint::Completions;
    // The range prepared once: its limit and reciprocal stay in registers
    // and no draw divides (a simulated hour draws about a billion of these).
    const DrawRange range(ids ? kFirstRandomTokenId : 0,
                          ids ? kLastRandomTokenId : static_cast<int64_t>(kWords.size()) - 1);
    for (int32_t& draw : draws) draw = static_cast<int32_t>(random_.between(range));
}

SyntheticPrompt SyntheticPrompts::next() {
    SyntheticPrompt prompt;
    next(prompt);
    return prompt;
}

void SyntheticPrompts::next(SyntheticPrompt& prompt) {
    prompt.prefix = -1;
    if (!prefixes_.empty()) {
        // One block draws nothing, so its prompts are those of before there were more.
        prompt.prefix = prefixes_.size() == 1 ? 0 : random_.between(0, options_.n_prefixes - 1);
    }
    const int64_t question_len = draw_length(random_, input_len_, options_.range_ratio);
    prompt.max_tokens = draw_length(random_, output_len_, options_.range_ratio);
    draw_tokens(question_len, prompt.question);
}

std::vector<BenchPrompt> random_dataset(const DatasetOptions& options) {
    DatasetOptions random_options = options;
    random_options.kind = "random";
    SyntheticPrompts synthetic(random_options);
    std::vector<BenchPrompt> prompts;
    for (int64_t i = 0; i < options.n_prompts; ++i) {
        SyntheticPrompt drawn = synthetic.next();
        BenchPrompt prompt;
        prompt.prompt_len = static_cast<int64_t>(drawn.question.size());
        prompt.max_tokens = drawn.max_tokens;
        json tokens = tokens_json(drawn.question, options.endpoint);
        prompt.payload = options.endpoint == BenchEndpoint::Chat
                             ? user_messages(nullptr, std::move(tokens))
                             : std::move(tokens);
        prompts.push_back(std::move(prompt));
    }
    return prompts;
}

std::vector<BenchPrompt> prefix_dataset(const DatasetOptions& options) {
    DatasetOptions prefix_options = options;
    prefix_options.kind = "prefix";
    SyntheticPrompts synthetic(prefix_options);
    std::vector<json> prefixes;
    for (const std::vector<int32_t>& prefix : synthetic.prefixes()) {
        prefixes.push_back(tokens_json(prefix, options.endpoint));
    }
    std::vector<BenchPrompt> prompts;
    for (int64_t i = 0; i < options.n_prompts; ++i) {
        SyntheticPrompt drawn = synthetic.next();
        BenchPrompt prompt;
        const json& prefix = prefixes[static_cast<size_t>(drawn.prefix)];
        prompt.prompt_len = options.prefix_len + static_cast<int64_t>(drawn.question.size());
        prompt.max_tokens = drawn.max_tokens;
        json question = tokens_json(drawn.question, options.endpoint);
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
