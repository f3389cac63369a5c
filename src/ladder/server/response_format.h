// How an endpoint renders choices: the one part that differs between
// /v1/completions and /v1/chat/completions. The envelopes around choices
// (id, object, created, model, usage) and the SSE framing are shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ladder/server/completion_job.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::server {

// What every response and chunk of one API request carries.
struct ResponseMeta {
    std::string id;
    int64_t created = 0;  // Unix seconds
    std::string model;
};

class ResponseFormat {
public:
    virtual ~ResponseFormat() = default;

    virtual const char* id_prefix() const = 0;     // "cmpl-", "chatcmpl-"
    virtual const char* object() const = 0;        // of a whole response
    virtual const char* chunk_object() const = 0;  // of a stream chunk

    // A choice of a whole response, from everything the choice produced.
    virtual nlohmann::json response_choice(int32_t index, const ChoiceState& choice,
                                           const tokenizer::Tokenizer& tokenizer) const = 0;
    // A choice sent before any output (chat: the assistant's role;
    // completions: the echoed prompt), or nothing.
    virtual std::optional<nlohmann::json> opening_choice(int32_t index,
                                                         const ChoiceState& choice) const = 0;
    // The choice of the chunk for one engine output, or nothing to send.
    // text_offset is the choice's count for completions logprobs.
    virtual std::optional<nlohmann::json> chunk_choice(const ChoiceOutput& news,
                                                       const tokenizer::Tokenizer& tokenizer,
                                                       size_t& text_offset) const = 0;
};

// A fresh id with the format's prefix, the time now and the served name.
ResponseMeta make_response_meta(const ResponseFormat& format, const std::string& model);

// The finish reason as OpenAI names it; null while running. A chat choice
// that stopped after calling tools finished with "tool_calls".
nlohmann::json finish_reason_json(const std::optional<engine::FinishReason>& reason,
                                  bool tool_calls = false);

// {id, object, created, model, choices, usage} of a finished job. Throws
// ApiError 500 when a choice ended with an engine error (the request failed,
// though the server goes on).
nlohmann::json response_json(const ResponseMeta& meta, const ResponseFormat& format,
                             const CompletionJob& job, const tokenizer::Tokenizer& tokenizer);

// The SSE events of one stream's chunks. Every chunk of a stream carries
// the same envelope (id, object, created, model), so it is serialized once
// and a chunk costs only its choice: at 32 streams one event-loop thread
// writes a step's 32 chunks one after another, and the last one waits for
// the others. With stream_options.include_usage every chunk carries
// "usage", null but in the last one, as OpenAI sends it.
class ChunkRenderer {
public:
    ChunkRenderer(const ResponseMeta& meta, const ResponseFormat& format, bool include_usage);

    // Appends `data: {...}\n\n` of a chunk holding choice.
    void append_choice(std::string& out, const nlohmann::json& choice) const;
    // Appends the last chunk: no choices, and the request's usage.
    void append_usage(std::string& out, const nlohmann::json& usage) const;

private:
    std::string head_;  // `data: {"id":…,"model":…,"choices":[`
    bool include_usage_;
};

// The error a stream sends in place of a choice's chunk when the engine
// failed on it: `data: {"error": {...}}`, which the openai client raises.
std::string sse_error_event(const std::string& what);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace ladder::server
