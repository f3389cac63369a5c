#include "ladder/tools/sim_workload.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

// xorshift64*: a reproducible stream of ids from a seed.
class IdStream {
public:
    explicit IdStream(uint64_t seed) : state_(seed | 1) {}
    int32_t next() {
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        return static_cast<int32_t>((state_ * 0x2545F4914F6CDD1DULL) >> 33);
    }

private:
    uint64_t state_;
};

void append_ids(uint64_t seed, int64_t n, std::vector<int32_t>& tokens) {
    IdStream ids(seed);
    for (int64_t i = 0; i < n; ++i) tokens.push_back(ids.next());
}

void append_text_tokens(const std::string& text, std::vector<int32_t>& tokens) {
    append_ids(std::hash<std::string>{}(text), estimate_tokens(text), tokens);
}

uint64_t mix(uint64_t a, uint64_t b) {
    // splitmix64's finaliser over the pair: distinct seeds for distinct lines.
    uint64_t z = a * 0x9E3779B97F4A7C15ULL + b;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int32_t output_len_of(int64_t max_tokens) {
    return static_cast<int32_t>(std::clamp<int64_t>(max_tokens, 1, INT32_MAX));
}

}  // namespace

bool FixedRequests::next(SimRequest& request) {
    if (next_ >= requests_.size()) return false;
    request = requests_[next_++];
    return true;
}

std::vector<int32_t> simulated_prompt(const BenchPrompt& prompt) {
    std::vector<int32_t> tokens;
    const json& payload = prompt.payload;
    if (payload.is_string()) {
        append_text_tokens(payload.get<std::string>(), tokens);
    } else if (payload.is_array()) {
        for (const json& item : payload) {
            if (item.is_number_integer()) {
                tokens.push_back(item.get<int32_t>());
            } else if (item.is_object() && item.contains("content") &&
                       item["content"].is_string()) {
                append_text_tokens(item["content"].get<std::string>(), tokens);
            }
        }
    }
    if (tokens.empty()) tokens.push_back(0);
    return tokens;
}

PromptRequests::PromptRequests(std::vector<BenchPrompt> prompts, const ArrivalOptions& arrivals,
                               uint64_t seed)
    : prompts_(std::move(prompts)), arrivals_(arrivals, seed) {}

bool PromptRequests::next(SimRequest& request) {
    if (next_ >= prompts_.size()) return false;
    BenchPrompt& prompt = prompts_[next_];
    request.index = static_cast<int64_t>(next_);
    request.arrival_s = arrivals_.next();
    request.prompt = simulated_prompt(prompt);
    request.output_len = output_len_of(prompt.max_tokens);
    prompt.payload = nullptr;  // drawn once; what is left of it is not needed
    ++next_;
    return true;
}

SyntheticRequests::SyntheticRequests(const DatasetOptions& dataset, const ArrivalOptions& arrivals)
    : prompts_(dataset),
      arrivals_(arrivals, dataset.seed),
      n_total_(dataset.n_prompts),
      chat_offset_(dataset.endpoint == BenchEndpoint::Chat ? 1000 : 0) {}

bool SyntheticRequests::next(SimRequest& request) {
    if (next_ >= n_total_) return false;
    prompts_.next(drawn_);
    const SyntheticPrompt& drawn = drawn_;
    request.index = next_++;
    request.arrival_s = arrivals_.next();
    request.prompt.clear();
    // The question's ids are drawn for this request alone: only the prefix is shared.
    request.n_shared_tokens = 0;
    request.output_len = output_len_of(drawn.max_tokens);
    // Room for the output as well, which the replica appends to the same tokens.
    request.prompt.reserve(drawn.question.size() + static_cast<size_t>(request.output_len));
    if (drawn.prefix >= 0) {
        const std::vector<int32_t>& prefix = prompts_.prefixes()[static_cast<size_t>(drawn.prefix)];
        request.prompt.reserve(prefix.size() + drawn.question.size() +
                               static_cast<size_t>(request.output_len));
        request.prompt.insert(request.prompt.end(), prefix.begin(), prefix.end());
        request.n_shared_tokens = static_cast<int32_t>(prefix.size());
    }
    request.prompt.insert(request.prompt.end(), drawn.question.begin(), drawn.question.end());
    if (chat_offset_ != 0) {
        for (int32_t& id : request.prompt) id += chat_offset_;
    }
    return true;
}

TraceRequests::TraceRequests(const std::string& path, std::optional<int64_t> max_requests,
                             uint64_t seed)
    : path_(path), file_(path), max_requests_(max_requests), seed_(seed) {
    if (!file_) util::fail("cannot read the trace {}", path);
}

bool TraceRequests::next(SimRequest& request) {
    if (max_requests_ && n_read_ >= *max_requests_) return false;
    std::string text;
    while (std::getline(file_, text)) {
        ++line_;
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = fmt::format("{} line {}", path_, line_);
        const TraceRecord record = parse_trace_line(text, where);
        if (record.arrival_s < last_arrival_s_) {
            util::fail(
                "{}: arrival_s {} is before the line above's {} (a trace is in arrival order)",
                where, record.arrival_s, last_arrival_s_);
        }
        last_arrival_s_ = record.arrival_s;
        request.index = n_read_++;
        request.arrival_s = record.arrival_s;
        request.prompt.clear();
        request.prompt.reserve(static_cast<size_t>(record.input_len));
        // The ids after the prefix are drawn from this line's seed: its own.
        request.n_shared_tokens = record.prefix_id ? static_cast<int32_t>(record.prefix_len) : 0;
        if (record.prefix_id) {
            append_ids(mix(std::hash<std::string>{}(*record.prefix_id), 0x50524546),
                       record.prefix_len, request.prompt);
        }
        append_ids(mix(seed_, static_cast<uint64_t>(line_)), record.input_len - record.prefix_len,
                   request.prompt);
        request.output_len = output_len_of(record.output_len);
        return true;
    }
    if (file_.bad()) util::fail("cannot read the trace {}", path_);
    return false;
}

std::string trace_line(const TraceRecord& record) {
    json line = {{"arrival_s", record.arrival_s},
                 {"input_len", record.input_len},
                 {"output_len", record.output_len}};
    if (record.prefix_id) {
        line["prefix_id"] = *record.prefix_id;
        line["prefix_len"] = record.prefix_len;
    }
    return line.dump();
}

TraceRecord parse_trace_line(const std::string& line, const std::string& where) {
    json object;
    try {
        object = json::parse(line);
    } catch (const json::parse_error& error) {
        util::fail("{}: not JSON ({})", where, error.what());
    }
    if (!object.is_object()) util::fail("{}: not a JSON object", where);
    auto number = [&](const char* key, bool required) -> std::optional<double> {
        const auto found = object.find(key);
        if (found == object.end()) {
            if (required) util::fail("{}: no \"{}\"", where, key);
            return std::nullopt;
        }
        if (!found->is_number()) util::fail("{}: \"{}\" is not a number", where, key);
        return found->get<double>();
    };
    auto count = [&](const char* key, bool required, int64_t least) -> int64_t {
        const std::optional<double> value = number(key, required);
        if (!value) return 0;
        if (*value != static_cast<double>(static_cast<int64_t>(*value)) || *value < least) {
            util::fail("{}: \"{}\" must be a whole number of at least {}, not {}", where, key,
                       least, *value);
        }
        return static_cast<int64_t>(*value);
    };
    TraceRecord record;
    record.arrival_s = *number("arrival_s", true);
    if (!(record.arrival_s >= 0.0) || !std::isfinite(record.arrival_s)) {
        util::fail("{}: \"arrival_s\" must not be negative, not {}", where, record.arrival_s);
    }
    record.input_len = count("input_len", true, 1);
    record.output_len = count("output_len", true, 1);
    if (const auto id = object.find("prefix_id"); id != object.end()) {
        if (id->is_string()) {
            record.prefix_id = id->get<std::string>();
        } else if (id->is_number_integer()) {
            record.prefix_id = std::to_string(id->get<int64_t>());
        } else {
            util::fail("{}: \"prefix_id\" must be a string or an integer", where);
        }
        record.prefix_len = count("prefix_len", true, 0);
        if (record.prefix_len > record.input_len) {
            util::fail("{}: \"prefix_len\" ({}) exceeds \"input_len\" ({})", where,
                       record.prefix_len, record.input_len);
        }
    } else if (object.contains("prefix_len")) {
        util::fail("{}: \"prefix_len\" without a \"prefix_id\"", where);
    }
    return record;
}

}  // namespace ladder::tools
