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
    engine::RequestParams params;  // everything but the prompt and the cache salt
    int32_t n = 1;                 // choices per prompt
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    bool echo = false;           // completions: prompt text before the output
    std::string user;
    std::string cache_salt;  // vLLM's field: requests share cached prefixes only within one salt
    // Who called (auth.h's Tenant::id; empty: the server has no keys). Set by
    // the route, not the body: one tenant's prefix cache is never another's.
    std::string tenant;
    // Chat: how each choice's text is read (tool calls, reasoning).
    ChatOutputOptions chat_output;
};

// The most choices one request may ask for.
inline constexpr int32_t kMaxChoices = 16;
// Engine requests one API request may start (prompts x n): a bound on what
// one call can put in the queue.
inline constexpr size_t kMaxEngineRequests = 256;

// The most bytes a prompt's text may have before it is tokenized: no token
// stands for more than max_token_bytes of text, so a longer one could not fit
// max_model_len tokens. Checking first keeps a huge text from costing a
// tokenization that could only end in a 400.
size_t max_prompt_bytes(const engine::ModelBundle& bundle, int32_t max_model_len);

// The salt the engine keys a request's prefix blocks with: the tenant and the
// request's cache_salt, unambiguously joined (empty when both are).
std::string engine_cache_salt(const std::string& tenant, const std::string& cache_salt);

// Token ids of a JSON array, each checked against the vocabulary (ApiError
// 400 naming `name` otherwise).
std::vector<engine::TokenId> parse_token_ids(const nlohmann::json& value, const char* name,
                                             int32_t vocab_size);

// The body's conversation (parse_chat_inputs: messages, tools,
// chat_template_kwargs, ...) rendered by the model's chat template, as token
// ids. ApiError 400 naming the malformed field, or "messages" with the
// template's message when it raises.
// Text past max_prompt_bytes() is refused before it is tokenized.
std::vector<engine::TokenId> chat_prompt_tokens(const nlohmann::json& body,
                                                const engine::ModelBundle& bundle,
                                                int32_t max_model_len);

// One engine request per choice, in OpenAI's order (choice index = prompt
// index x n + i). With a seed, choice i samples from seed + i: the choices
// differ, and each stays reproducible. They share the request's stop rules
// and logit bias (util::Shared), not copies.
std::vector<engine::RequestParams> engine_requests(const CompletionRequest& request);

// Throws ApiError (400) for a malformed body; util::InputError from the chat
// template (an unsupported role order) is turned into one too. Every list is
// bounded (engine/request.h) and checked before it is copied or tokenized;
// max_model_len bounds the prompts. written: the body with its keys in the
// order sent, which schemas are compiled in (null: the parsed body's sorted
// order).
CompletionRequest parse_completion_request(const nlohmann::json& body, Endpoint endpoint,
                                           const engine::ModelBundle& bundle,
                                           int32_t max_model_len,
                                           const nlohmann::ordered_json* written = nullptr);

}  // namespace ladder::server
