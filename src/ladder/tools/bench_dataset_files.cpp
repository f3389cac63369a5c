// The datasets read from files: ShareGPT conversations and JSONL requests.
#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/seeded_random.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

constexpr int64_t kDefaultFileOutputLen = 128;

std::string read_whole_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) util::fail("cannot open dataset file {}", path);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

bool is_one_of(const std::string& value, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (value == name) return true;
    }
    return false;
}

std::string string_field(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The first human turn and the assistant's reply to it, if the entry has both.
std::optional<std::pair<std::string, std::string>> first_exchange(const json& entry) {
    if (!entry.is_object()) return std::nullopt;
    const auto turns = entry.find("conversations");
    if (turns == entry.end() || !turns->is_array()) return std::nullopt;
    for (size_t i = 0; i + 1 < turns->size(); ++i) {
        const json& ask = (*turns)[i];
        const json& reply = (*turns)[i + 1];
        if (!ask.is_object() || !reply.is_object()) continue;
        if (!is_one_of(string_field(ask, "from"), {"human", "user"})) continue;
        if (!is_one_of(string_field(reply, "from"), {"gpt", "assistant", "chatgpt"})) break;
        std::string question = string_field(ask, "value");
        std::string answer = string_field(reply, "value");
        if (question.empty() || answer.empty()) break;
        return std::make_pair(std::move(question), std::move(answer));
    }
    return std::nullopt;
}

json text_payload(std::string text, BenchEndpoint endpoint) {
    if (endpoint == BenchEndpoint::Completions) return text;
    return json::array({{{"role", "user"}, {"content", std::move(text)}}});
}

// One JSONL line as a prompt; `where` names the file and line in errors.
BenchPrompt jsonl_prompt(const json& line, const std::string& where,
                         const DatasetOptions& options) {
    if (!line.is_object()) util::fail("{}: not a JSON object", where);
    BenchPrompt prompt;
    const auto text = line.find("prompt");
    const auto messages = line.find("messages");
    if (messages != line.end()) {
        if (options.endpoint != BenchEndpoint::Chat) {
            util::fail("{}: `messages` needs --endpoint chat", where);
        }
        if (!messages->is_array() || messages->empty()) {
            util::fail("{}: `messages` must be a non-empty list", where);
        }
        prompt.payload = *messages;
        for (const json& message : *messages) {
            if (!message.is_object()) continue;
            prompt.prompt_len += estimate_tokens(string_field(message, "content"));
        }
    } else if (text != line.end() && text->is_string()) {
        prompt.prompt_len = estimate_tokens(text->get<std::string>());
        prompt.payload = text_payload(text->get<std::string>(), options.endpoint);
    } else if (text != line.end() && text->is_array() && !text->empty() &&
               std::all_of(text->begin(), text->end(),
                           [](const json& id) { return id.is_number_integer(); })) {
        if (options.endpoint == BenchEndpoint::Chat) {
            util::fail("{}: a token-id `prompt` needs --endpoint completions", where);
        }
        prompt.payload = *text;
        prompt.prompt_len = static_cast<int64_t>(text->size());
    } else {
        util::fail("{}: needs `prompt` (text or token ids) or `messages`", where);
    }
    prompt.max_tokens = options.output_len.value_or(kDefaultFileOutputLen);
    for (const char* key : {"max_tokens", "max_completion_tokens"}) {
        const auto it = line.find(key);
        if (it == line.end() || options.output_len) continue;
        if (!it->is_number_integer() || it->get<int64_t>() < 1) {
            util::fail("{}: `{}` must be a positive integer", where, key);
        }
        prompt.max_tokens = it->get<int64_t>();
    }
    return prompt;
}

}  // namespace

std::vector<BenchPrompt> sharegpt_from_text(const std::string& text, const std::string& name,
                                            const DatasetOptions& options) {
    if (options.output_len && *options.output_len < 1)
        util::fail("--output-len must be at least 1");
    const json entries = json::parse(text, nullptr, false);
    if (!entries.is_array()) util::fail("{}: not a ShareGPT file (a JSON list)", name);
    std::vector<std::pair<std::string, std::string>> exchanges;
    for (const json& entry : entries) {
        if (auto exchange = first_exchange(entry)) exchanges.push_back(std::move(*exchange));
    }
    if (exchanges.empty()) {
        util::fail("{}: no conversation with a human turn and a reply", name);
    }
    // Fisher–Yates with the seed, then the first n_prompts.
    std::vector<size_t> order(exchanges.size());
    std::iota(order.begin(), order.end(), size_t{0});
    SeededRandom random(options.seed);
    for (size_t i = order.size() - 1; i > 0; --i) {
        std::swap(order[i], order[static_cast<size_t>(random.between(0, static_cast<int64_t>(i)))]);
    }
    order.resize(std::min(order.size(), static_cast<size_t>(options.n_prompts)));
    std::vector<BenchPrompt> prompts;
    for (const size_t index : order) {
        auto& [question, answer] = exchanges[index];
        BenchPrompt prompt;
        prompt.prompt_len = estimate_tokens(question);
        prompt.max_tokens = options.output_len.value_or(estimate_tokens(answer));
        prompt.payload = text_payload(std::move(question), options.endpoint);
        prompts.push_back(std::move(prompt));
    }
    return prompts;
}

std::vector<BenchPrompt> jsonl_from_text(const std::string& text, const std::string& name,
                                         const DatasetOptions& options) {
    if (options.output_len && *options.output_len < 1)
        util::fail("--output-len must be at least 1");
    std::vector<BenchPrompt> prompts;
    std::istringstream lines(text);
    std::string line;
    for (int64_t number = 1; std::getline(lines, line); ++number) {
        if (static_cast<int64_t>(prompts.size()) == options.n_prompts) break;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = name + ":" + std::to_string(number);
        const json parsed = json::parse(line, nullptr, false);
        if (parsed.is_discarded()) util::fail("{}: not valid JSON", where);
        prompts.push_back(jsonl_prompt(parsed, where, options));
    }
    if (prompts.empty()) util::fail("{}: no requests", name);
    return prompts;
}

std::vector<BenchPrompt> sharegpt_dataset(const DatasetOptions& options) {
    return sharegpt_from_text(read_whole_file(options.path), options.path, options);
}

std::vector<BenchPrompt> jsonl_dataset(const DatasetOptions& options) {
    return jsonl_from_text(read_whole_file(options.path), options.path, options);
}

}  // namespace ladder::tools
