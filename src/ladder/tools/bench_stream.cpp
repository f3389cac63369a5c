#include "ladder/tools/bench_stream.h"

#include <fmt/format.h>

namespace ladder::tools {

namespace {

using nlohmann::json;

constexpr size_t kMaxQuotedChars = 200;

std::string cut(std::string_view text) {
    if (text.size() <= kMaxQuotedChars) return std::string(text);
    return std::string(text.substr(0, kMaxQuotedChars)) + "...";
}

// The output text a chunk carries: `text` of a completion choice, or a
// chat delta's `content` (or reasoning, which is output too).
std::string chunk_text(const json& choice, BenchEndpoint endpoint) {
    const auto string_at = [](const json& object, const char* key) {
        const auto it = object.find(key);
        return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (endpoint == BenchEndpoint::Completions) return string_at(choice, "text");
    const auto delta = choice.find("delta");
    if (delta == choice.end() || !delta->is_object()) return {};
    std::string text = string_at(*delta, "content");
    if (text.empty()) text = string_at(*delta, "reasoning_content");
    if (text.empty()) text = string_at(*delta, "reasoning");
    return text;
}

}  // namespace

const char* endpoint_path(BenchEndpoint endpoint) {
    return endpoint == BenchEndpoint::Chat ? "/v1/chat/completions" : "/v1/completions";
}

std::string error_message_of(const std::string& body) {
    const json parsed = json::parse(body, nullptr, false);
    if (parsed.is_object()) {
        const auto error = parsed.find("error");
        if (error != parsed.end() && error->is_object()) {
            const auto message = error->find("message");
            if (message != error->end() && message->is_string()) return message->get<std::string>();
        }
        if (error != parsed.end() && error->is_string()) return error->get<std::string>();
        const auto message = parsed.find("message");
        if (message != parsed.end() && message->is_string()) return message->get<std::string>();
    }
    return cut(body);
}

OpenAiStreamReader::OpenAiStreamReader(BenchEndpoint endpoint, RequestResult& result)
    : endpoint_(endpoint), result_(result) {}

int64_t OpenAiStreamReader::read(const std::vector<SseEvent>& events, double elapsed_s) {
    int64_t n_tokens = 0;
    for (const SseEvent& event : events) {
        if (done_ || failed()) break;
        if (read_one(event, elapsed_s)) ++n_tokens;
    }
    return n_tokens;
}

bool OpenAiStreamReader::read_one(const SseEvent& event, double elapsed_s) {
    if (event.data == "[DONE]") {
        done_ = true;
        return false;
    }
    const json chunk = json::parse(event.data, nullptr, false);
    if (event.type == "error" || (chunk.is_object() && chunk.contains("error"))) {
        error_ = "error event in the stream: " + error_message_of(event.data);
        return false;
    }
    if (!chunk.is_object()) {
        error_ = "a stream event is not a JSON object: " + cut(event.data);
        return false;
    }
    if (const auto usage = chunk.find("usage"); usage != chunk.end() && usage->is_object()) {
        read_usage(*usage);
    }
    const auto choices = chunk.find("choices");
    if (choices == chunk.end() || !choices->is_array() || choices->empty()) return false;
    if (!choices->front().is_object() || chunk_text(choices->front(), endpoint_).empty()) {
        return false;  // a role-only opening or an empty closing chunk: no token
    }
    if (seen_token_) {
        result_.itls_s.push_back(elapsed_s - last_token_s_);
    } else {
        result_.ttft_s = elapsed_s;
        seen_token_ = true;
    }
    last_token_s_ = elapsed_s;
    ++result_.n_stream_tokens;
    return true;
}

void OpenAiStreamReader::read_usage(const json& usage) {
    const auto count = [](const json& object, const char* key) -> std::optional<int64_t> {
        const auto it = object.find(key);
        if (it == object.end() || !it->is_number_integer()) return std::nullopt;
        return it->get<int64_t>();
    };
    if (auto n = count(usage, "prompt_tokens")) result_.usage_prompt_tokens = n;
    if (auto n = count(usage, "completion_tokens")) result_.usage_completion_tokens = n;
    const auto details = usage.find("prompt_tokens_details");
    if (details != usage.end() && details->is_object()) {
        if (auto n = count(*details, "cached_tokens")) result_.usage_cached_tokens = n;
    }
}

void OpenAiStreamReader::finish(double elapsed_s) {
    result_.e2e_s = elapsed_s;
    if (failed()) {
        result_.error = error_;
    } else if (!done_) {
        result_.error = "the stream ended before `data: [DONE]`";
    } else if (!seen_token_) {
        result_.error = "the stream carried no output text";
    }
    result_.success = result_.error.empty();
}

}  // namespace ladder::tools
