#include "ladder/tools/bench_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "ladder/tools/bench_stream.h"
#include "ladder/tools/sse_parser.h"

namespace ladder::tools {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Enough of an error body for its message, and of a wrong body to show.
constexpr size_t kKeptBodyBytes = 4096;
constexpr size_t kQuotedBodyChars = 120;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// One line of printable text from the start of a body.
std::string quote_start(const std::string& body) {
    std::string line;
    for (const char c : body.substr(0, kQuotedBodyChars)) {
        line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    return body.size() > kQuotedBodyChars ? line + "..." : line;
}

}  // namespace

std::string not_openai_message(const std::string& what, const std::string& content_type,
                               const std::string& body_start) {
    return fmt::format(
        "not an OpenAI-compatible endpoint: {} answered {}{}", what,
        content_type.empty() ? "with no content type" : content_type,
        body_start.empty() ? std::string(" and an empty body") : ": " + quote_start(body_start));
}

json request_body(const BenchTarget& target, const BenchPrompt& prompt) {
    json body = {{"model", target.model},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}},
                 {"temperature", target.sampling.temperature},
                 {"ignore_eos", true}};
    if (target.sampling.top_p) body["top_p"] = *target.sampling.top_p;
    if (target.sampling.top_k) body["top_k"] = *target.sampling.top_k;
    if (target.sampling.min_p) body["min_p"] = *target.sampling.min_p;
    if (target.endpoint == BenchEndpoint::Chat) {
        body["messages"] = prompt.payload;
        body["max_completion_tokens"] = prompt.max_tokens;
    } else {
        body["prompt"] = prompt.payload;
        body["max_tokens"] = prompt.max_tokens;
    }
    return body;
}

RequestResult send_streaming_request(const BenchTarget& target, const BenchPrompt& prompt,
                                     std::atomic<int64_t>& live_tokens) {
    RequestResult result;
    result.prompt_len_estimate = prompt.prompt_len;
    HttpRequestSpec request;
    request.method = "POST";
    request.path = target.url.path_prefix + endpoint_path(target.endpoint);
    request.api_key = target.api_key;
    request.body = request_body(target, prompt).dump();

    int status = 0;
    std::string content_type;
    std::string body_start;  // the first bytes, for error messages
    SseParser parser;
    OpenAiStreamReader reader(target.endpoint, result);
    std::vector<SseEvent> events;
    const Clock::time_point sent = Clock::now();
    std::optional<HttpClientError> failure;
    try {
        send_http_request(
            target.url, request, target.timeout_s,
            [&](const HttpResponseHead& head) {
                status = head.status;
                content_type = head.content_type;
            },
            [&](std::string_view data) {
                // One timestamp for everything in this read, as a client sees it.
                const double elapsed_s = seconds_since(sent);
                if (body_start.size() < kKeptBodyBytes) {
                    body_start.append(data.substr(0, kKeptBodyBytes - body_start.size()));
                }
                if (status != kHttpOk) return true;
                events.clear();
                parser.feed(data, events);
                live_tokens += reader.read(events, elapsed_s);
                return !reader.failed();  // stop reading a stream that reported an error
            });
    } catch (const HttpClientError& error) {
        failure = error;
    }
    const double end_s = seconds_since(sent);
    events.clear();
    parser.finish(events);
    if (status == kHttpOk) live_tokens += reader.read(events, end_s);
    result.e2e_s = end_s;
    if (failure && !reader.failed()) {
        result.error = failure->responded() ? std::string("the stream broke: ") + failure->what()
                                            : std::string(failure->what());
        return result;
    }
    if (status != kHttpOk) {
        const std::string message = error_message_of(body_start);
        result.error = fmt::format("HTTP {}: {}", status, message.empty() ? "(no body)" : message);
        return result;
    }
    if (parser.n_data_lines() == 0) {
        // One JSON body where a stream was asked for: OpenAI-shaped, but not streaming.
        result.error = content_type.find("json") != std::string::npos
                           ? "the endpoint answered one " + content_type +
                                 " body, not a text/event-stream: it ignored `stream: true`"
                           : not_openai_message("POST " + request.path, content_type, body_start);
        return result;
    }
    reader.finish(end_s);
    return result;
}

}  // namespace ladder::tools
