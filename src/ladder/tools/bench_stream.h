// Reads one OpenAI streaming response (completions or chat chunks, a usage
// chunk, `data: [DONE]`, error events) into a RequestResult's timings and
// counts. Fed the SSE events with the time they arrived; no HTTP here.
#pragma once

#include <string>
#include <vector>

#include "ladder/tools/bench_request.h"
#include "ladder/tools/sse_parser.h"

namespace ladder::tools {

class OpenAiStreamReader {
public:
    OpenAiStreamReader(BenchEndpoint endpoint, RequestResult& result);

    // Events that arrived `elapsed_s` after the request was sent. Returns the
    // number of chunks with output text among them (for a live counter).
    int64_t read(const std::vector<SseEvent>& events, double elapsed_s);
    // The stream ended at `elapsed_s`: success, or the reason it failed.
    void finish(double elapsed_s);

    bool done() const { return done_; }
    bool failed() const { return !error_.empty(); }

private:
    bool read_one(const SseEvent& event, double elapsed_s);
    void read_usage(const nlohmann::json& usage);

    BenchEndpoint endpoint_;
    RequestResult& result_;
    bool done_ = false;
    bool seen_token_ = false;
    double last_token_s_ = 0.0;
    std::string error_;
};

// The message of an OpenAI error body ({"error": {"message": ...}} or
// {"error": "..."} or {"message": ...}); the text itself, cut short, when it
// is none of those.
std::string error_message_of(const std::string& body);

}  // namespace ladder::tools
