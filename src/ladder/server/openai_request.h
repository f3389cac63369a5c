// OpenAI request bodies (/v1/completions, /v1/chat/completions, and the lines
// of `ladder generate`) mapped onto engine requests. Every field is checked
// for type and range; a bad one is an ApiError naming it. Unknown fields are
// ignored, as OpenAI does; but a field that would change the output and is
// not supported (tools on /v1/completions) is refused.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ladder/engine/model_bundle.h"
#include "ladder/engine/request.h"
#include "ladder/server/chat_output.h"
#include "ladder/server/chat_prompt.h"

namespace ladder::server {

enum class Endpoint { Completions, ChatCompletions };

struct CompletionRequest {
    Endpoint endpoint = Endpoint::Completions;
    std::string model;                                  // as the client named it; may be empty
    std::vector<std::vector<engine::TokenId>> prompts;  // one per prompt (completions may batch)
    engine::RequestParams params;                       // everything but the prompt
    int32_t n = 1;                                      // choices per prompt
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    bool echo = false;           // completions: prompt text before the output
    std::string user;
    // Chat: how each choice's text is read (tool calls, reasoning).
    ChatOutputOptions chat_output;
};

// The most choices one request may ask for.
inline constexpr int32_t kMaxChoices = 16;

// Token ids of a JSON array, each checked against the vocabulary (ApiError
// 400 naming `name` otherwise).
std::vector<engine::TokenId> parse_token_ids(const nlohmann::json& value, const char* name,
                                             int32_t vocab_size);

// One engine request per choice, in OpenAI's order (choice index = prompt
// index x n + i). With a seed, choice i samples from seed + i: the choices
// differ, and each stays reproducible.
std::vector<engine::RequestParams> engine_requests(const CompletionRequest& request);

// Throws ApiError (400) for a malformed body; util::InputError from the chat
// template (an unsupported role order) is turned into one too. written: the
// body with its keys in the order sent, which schemas are compiled in (null:
// the parsed body's sorted order).
CompletionRequest parse_completion_request(const nlohmann::json& body, Endpoint endpoint,
                                           const engine::ModelBundle& bundle,
                                           const nlohmann::ordered_json* written = nullptr);

}  // namespace ladder::server
