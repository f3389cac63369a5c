#include "ladder/server/chat_prompt.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "ladder/server/api_error.h"
#include "ladder/server/request_fields.h"
#include "ladder/server/reasoning_parser.h"

namespace ladder::server {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 5> kRoles = {"system", "developer", "user", "assistant",
                                                    "tool"};

bool bool_field(const json& body, const char* name, bool fallback) {
    const json* value = non_null_field(body, name);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) invalid_param(name, fmt::format("'{}' must be true or false", name));
    return value->get<bool>();
}

// Text parts are joined into one string, which every template reads.
std::string message_content(const json& message) {
    const json* content = non_null_field(message, "content");
    if (content == nullptr) return "";  // an assistant turn with tool calls may have none
    if (content->is_string()) return content->get<std::string>();
    if (!content->is_array())
        invalid_param("messages", "message 'content' must be a string or a list of parts");
    std::string text;
    for (const json& part : *content) {
        // Compared as JSON: `value("type", "")` throws when the type is not a string.
        if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
            !part.contains("text") || !part["text"].is_string()) {
            invalid_param(
                "messages",
                "only text content parts ({\"type\": \"text\", \"text\": ...}) are supported");
        }
        text += part["text"].get<std::string>();
    }
    return text;
}

// OpenAI sends function.arguments as a JSON string; templates (Llama 3.1's
// tojson, Mistral's) expect the object, which is what vLLM passes them.
ordered_json tool_calls_of(const json& calls) {
    if (!calls.is_array()) invalid_param("messages", "'tool_calls' must be a list");
    ordered_json out = ordered_json::array();
    for (const json& call : calls) {
        const json* function = call.is_object() ? non_null_field(call, "function") : nullptr;
        if (function == nullptr || !function->is_object() || !function->contains("name") ||
            !(*function)["name"].is_string()) {
            invalid_param("messages", "each tool call needs a 'function' with a string 'name'");
        }
        ordered_json converted = call;
        if (const json* arguments = non_null_field(*function, "arguments"); arguments != nullptr) {
            if (arguments->is_string()) {
                json parsed = json::parse(arguments->get<std::string>(), nullptr, false);
                if (parsed.is_discarded()) {
                    invalid_param("messages", fmt::format("the arguments of tool call '{}' are "
                                                          "not valid JSON",
                                                          (*function)["name"].get<std::string>()));
                }
                converted["function"]["arguments"] = parsed;
            } else if (!arguments->is_object()) {
                invalid_param("messages", "tool call 'arguments' must be a JSON string");
            }
        }
        out.push_back(std::move(converted));
    }
    return out;
}

ordered_json message_of(const json& message) {
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
        invalid_param("messages", "each message needs a string 'role'");
    }
    std::string role = message["role"].get<std::string>();
    if (std::find(kRoles.begin(), kRoles.end(), role) == kRoles.end()) {
        invalid_param("messages",
                      fmt::format("unsupported role '{}': use system, developer, user, assistant "
                                  "or tool",
                                  role));
    }
    if (role == "developer") role = "system";  // OpenAI's newer name for it
    ordered_json out = message;
    out["role"] = role;
    out["content"] = message_content(message);
    if (const json* calls = non_null_field(message, "tool_calls"); calls != nullptr) {
        out["tool_calls"] = tool_calls_of(*calls);
    }
    return out;
}

}  // namespace

tokenizer::ChatInputs parse_chat_inputs(const json& body) {
    const json* messages = non_null_field(body, "messages");
    if (messages == nullptr || !messages->is_array() || messages->empty()) {
        invalid_param("messages", "'messages' must be a non-empty list of messages");
    }
    tokenizer::ChatInputs inputs;
    for (const json& message : *messages) inputs.messages.push_back(message_of(message));
    if (const json* tools = non_null_field(body, "tools"); tools != nullptr) {
        if (!tools->is_array() || !std::all_of(tools->begin(), tools->end(),
                                               [](const json& t) { return t.is_object(); })) {
            invalid_param("tools", "'tools' must be a list of tool objects");
        }
        inputs.tools = *tools;
    }
    if (const json* kwargs = non_null_field(body, "chat_template_kwargs"); kwargs != nullptr) {
        if (!kwargs->is_object()) {
            invalid_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
        }
        for (const auto& [name, value] : kwargs->items()) {
            if (tokenizer::ChatTemplate::is_reserved_variable(name)) {
                invalid_param("chat_template_kwargs",
                              fmt::format("'chat_template_kwargs' may not set '{}'", name));
            }
        }
        inputs.kwargs = *kwargs;
    }
    if (non_null_field(body, "chat_template") != nullptr) {
        invalid_param("chat_template",
                      "a chat template per request is not supported: the server renders the "
                      "model's (choose another with --chat-template or --chat-template-file)");
    }
    inputs.add_generation_prompt = bool_field(body, "add_generation_prompt", true);
    inputs.continue_final_message = bool_field(body, "continue_final_message", false);
    if (inputs.continue_final_message && inputs.add_generation_prompt) {
        invalid_param("continue_final_message",
                      "'continue_final_message' and 'add_generation_prompt' cannot both be true");
    }
    return inputs;
}

std::vector<engine::TokenId> render_chat_prompt(const tokenizer::ChatInputs& inputs,
                                                const engine::ModelBundle& bundle, bool add_special,
                                                size_t max_text_bytes) {
    try {
        const tokenizer::ChatTemplate& chat_template = engine::require_chat_template(bundle);
        const std::string text = chat_template.render(inputs);
        if (text.size() > max_text_bytes) {
            invalid_param("messages",
                          fmt::format("the conversation renders to {} bytes of text; at most {} "
                                      "can fit the context limit",
                                      text.size(), max_text_bytes));
        }
        return chat_template.encode(*bundle.tokenizer, text, add_special);
    } catch (const ApiError&) {
        throw;
    } catch (const util::InputError& error) {
        invalid_param("messages", error.what());
    }
}

ChatFeatures chat_features(const engine::ModelBundle& bundle) {
    ChatFeatures features;
    const std::string chat_template =
        bundle.chat_template ? std::string(bundle.chat_template->source()) : "";
    const std::optional<ToolCallFormat> named =
        tool_call_format_by_name(bundle.chat_options.tool_call_parser);
    // A template that shows no format of ours gets Hermes, the one most
    // fine-tunes copy, so a call such a model writes is still parsed.
    features.tool_calls =
        named ? *named : detect_tool_call_format(chat_template).value_or(ToolCallFormat::Hermes);
    const std::string& reasoning = bundle.chat_options.reasoning_parser;
    features.reasoning =
        reasoning.empty() ? template_reasons(chat_template) : reasoning == "deepseek_r1";
    return features;
}

}  // namespace ladder::server
