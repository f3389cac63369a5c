// The prompt of a chat request: its messages (system, user, assistant with
// or without tool_calls, tool results) and its tools, through the model's
// chat template, as token ids. Also how the model's outputs are read (the
// tool-call format and whether it reasons), picked from its template unless
// a flag names them.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "ladder/engine/model_bundle.h"
#include "ladder/engine/request.h"
#include "ladder/server/tool_call_parser.h"

namespace ladder::server {

struct ChatFeatures {
    ToolCallFormat tool_calls = ToolCallFormat::Hermes;
    bool reasoning = false;  // the output opens with <think> ... </think>
};

// --tool-call-parser and --reasoning-parser when given, else what the GGUF's
// chat template shows.
ChatFeatures chat_features(const engine::ModelBundle& bundle);

// The body's `messages` (and `tools`) with the model's chat template
// applied, as token ids. written: the body with its keys in the order they
// were sent, which tools are shown in (null: the parsed body's order).
// ApiError 400 (param "messages" or "tools") for a malformed list or an
// unsupported role order.
std::vector<engine::TokenId> chat_prompt_tokens(const nlohmann::json& body,
                                                const engine::ModelBundle& bundle,
                                                const nlohmann::ordered_json* written = nullptr);

}  // namespace ladder::server
