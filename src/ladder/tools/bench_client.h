// One benchmark request: a streaming completion or chat completion sent to
// an OpenAI-compatible endpoint, timed from the moment it is sent, with its
// failure (HTTP status, broken connection, not an OpenAI stream) kept as a
// message rather than thrown.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ladder/tools/bench_http.h"
#include "ladder/tools/bench_request.h"

namespace ladder::tools {

inline constexpr int kHttpOk = 200;

struct BenchTarget {
    BaseUrl url;
    std::string api_key;  // empty: no Authorization header
    std::string model;
    BenchEndpoint endpoint = BenchEndpoint::Completions;
    double timeout_s = 600.0;  // longest wait for the next byte of a response
    BenchSampling sampling;
};

// The request: streaming with usage in the last chunk, the target's sampling,
// and ignore_eos so that max_tokens is the output length (ladder and vLLM
// both take it; others ignore it).
nlohmann::json request_body(const BenchTarget& target, const BenchPrompt& prompt);

// Sends it and reads the stream to the end. `live_tokens` counts chunks with
// output text as they arrive, for the progress line. Never throws for what
// the server does.
RequestResult send_streaming_request(const BenchTarget& target, const BenchPrompt& prompt,
                                     std::atomic<int64_t>& live_tokens);

// The message for a response that is not an SSE stream of OpenAI chunks.
std::string not_openai_message(const std::string& what, const std::string& content_type,
                               const std::string& body_start);

}  // namespace ladder::tools
