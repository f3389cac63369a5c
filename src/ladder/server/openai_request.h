// OpenAI request bodies (/v1/completions, /v1/chat/completions, and the lines
// of `ladder generate`) mapped onto engine requests. Every field is checked
// for type and range; a bad one is an ApiError naming it. Unknown fields are
// ignored, as OpenAI does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ladder/engine/model_bundle.h"
#include "ladder/engine/request.h"

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
};

// The most choices one request may ask for.
inline constexpr int32_t kMaxChoices = 16;

// Token ids of a JSON array, each checked against the vocabulary (ApiError
// 400 naming `name` otherwise).
std::vector<engine::TokenId> parse_token_ids(const nlohmann::json& value, const char* name,
                                             int32_t vocab_size);

// The body's conversation (parse_chat_inputs: messages, tools,
// chat_template_kwargs, ...) rendered by the model's chat template, as token
// ids. ApiError 400 naming the malformed field, or "messages" with the
// template's message when it raises.
std::vector<engine::TokenId> chat_prompt_tokens(const nlohmann::json& body,
                                                const engine::ModelBundle& bundle);

// One engine request per choice, in OpenAI's order (choice index = prompt
// index x n + i). With a seed, choice i samples from seed + i: the choices
// differ, and each stays reproducible.
std::vector<engine::RequestParams> engine_requests(const CompletionRequest& request);

// Throws ApiError (400) for a malformed body; util::InputError from the chat
// template (an unsupported role order) is turned into one too.
CompletionRequest parse_completion_request(const nlohmann::json& body, Endpoint endpoint,
                                           const engine::ModelBundle& bundle);

}  // namespace ladder::server
