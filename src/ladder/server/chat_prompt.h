// A chat request's conversation as the model's chat template sees it:
// OpenAI's messages, tools and vLLM's template fields mapped onto
// tokenizer::ChatInputs, the way vLLM hands them to transformers.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "ladder/engine/model_bundle.h"
#include "ladder/engine/request.h"
#include "ladder/server/tool_call_parser.h"
#include "ladder/tokenizer/chat_template.h"

namespace ladder::server {

// From the body's fields:
// - messages (roles system, developer (read as system), user, assistant, tool;
//   content a string, null, or a list of text parts, joined; assistant
//   tool_calls with function.arguments given as a JSON string, which the
//   template gets as an object; every other key passed on as it is),
// - tools (a list of {"type": "function", "function": {...}}),
// - chat_template_kwargs (an object of further template variables),
// - add_generation_prompt (default true) and continue_final_message.
// ApiError 400 naming the field that is malformed.
tokenizer::ChatInputs parse_chat_inputs(const nlohmann::json& body);

// The inputs rendered by the model's chat template and tokenized (with BOS
// where the vocabulary wants one, written once). ApiError 400, param
// "messages", with the template's message when it raises or fails, or when
// the rendered text is longer than max_text_bytes (checked before the text
// is tokenized).
std::vector<engine::TokenId> render_chat_prompt(
    const tokenizer::ChatInputs& inputs, const engine::ModelBundle& bundle,
    bool add_special = true, size_t max_text_bytes = std::numeric_limits<size_t>::max());

// How the model's chat outputs are read: the tool-call format and whether it
// reasons (<think> ... </think>).
struct ChatFeatures {
    ToolCallFormat tool_calls = ToolCallFormat::Hermes;
    bool reasoning = false;  // the output opens with <think> ... </think>
};

// --tool-call-parser and --reasoning-parser when given, else what the chat
// template in use (the model's, or the one --chat-template names) shows.
ChatFeatures chat_features(const engine::ModelBundle& bundle);

}  // namespace ladder::server
