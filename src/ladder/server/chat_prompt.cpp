#include "ladder/server/chat_prompt.h"

#include <fmt/format.h>

#include "ladder/server/api_error.h"
#include "ladder/server/reasoning_parser.h"
#include "ladder/server/tool_request.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

const json* field(const json& body, const char* name) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
}

std::string message_content(const json& message) {
    const json* content = field(message, "content");
    if (content == nullptr) return "";  // an assistant turn may have none
    if (content->is_string()) return content->get<std::string>();
    if (!content->is_array())
        invalid_param("messages", "message 'content' must be a string or a list of parts");
    std::string text;
    for (const json& part : *content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string()) {
            invalid_param(
                "messages",
                "only text content parts ({\"type\": \"text\", \"text\": ...}) are supported");
        }
        text += part["text"].get<std::string>();
    }
    return text;
}

// An assistant turn's calls, checked: [{id, type: function, function: {name,
// arguments}}].
json message_tool_calls(const json& calls) {
    if (!calls.is_array()) invalid_param("messages", "'tool_calls' must be a list of calls");
    for (const json& call : calls) {
        const json* function = call.is_object() ? field(call, "function") : nullptr;
        if (function == nullptr || !function->is_object() || !function->contains("name") ||
            !(*function)["name"].is_string() ||
            (function->contains("arguments") && !(*function)["arguments"].is_string())) {
            invalid_param("messages",
                          "each tool call needs {\"function\": {\"name\": ..., \"arguments\": "
                          "\"<JSON text>\"}}");
        }
    }
    return calls;
}

// The messages as a chat template reads them: role, content (text), and an
// assistant's tool_calls or a tool result's tool_call_id.
json normalized_messages(const json& body) {
    const json* messages = field(body, "messages");
    if (messages == nullptr || !messages->is_array() || messages->empty()) {
        invalid_param("messages", "'messages' must be a non-empty list of messages");
    }
    json normalized = json::array();
    for (const json& message : *messages) {
        if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
            invalid_param("messages", "each message needs a string 'role'");
        }
        std::string role = message["role"].get<std::string>();
        if (role == "developer") role = "system";  // OpenAI's newer name for it
        if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
            invalid_param(
                "messages",
                fmt::format("unsupported role '{}': use system, user, assistant or tool", role));
        }
        json out = {{"role", role}, {"content", message_content(message)}};
        if (const json* calls = field(message, "tool_calls")) {
            if (role != "assistant")
                invalid_param("messages", "only assistant messages carry 'tool_calls'");
            out["tool_calls"] = message_tool_calls(*calls);
        }
        if (role == "tool") {
            const json* id = field(message, "tool_call_id");
            if (id == nullptr || !id->is_string())
                invalid_param("messages", "a tool message needs a string 'tool_call_id'");
            out["tool_call_id"] = *id;
        }
        normalized.push_back(std::move(out));
    }
    return normalized;
}

// --- Until the chat template is rendered by the Jinja interpreter, which
// renders tools, tool calls and tool results itself: the hand-written
// templates know system, user and assistant turns only, so tools become part
// of the system turn, calls are written into the assistant turn in the
// model's format, and results become a user turn.

std::string call_arguments(const json& call) {
    const std::string text = call["function"].value("arguments", "{}");
    const json parsed = json::parse(text, nullptr, false);
    return parsed.is_discarded() ? json(text).dump() : parsed.dump();
}

std::string written_calls(const json& calls, ToolCallFormat format) {
    std::string text;
    for (size_t i = 0; i < calls.size(); ++i) {
        const std::string name = calls[i]["function"]["name"].get<std::string>();
        const std::string arguments = call_arguments(calls[i]);
        switch (format) {
            case ToolCallFormat::Hermes:
                text +=
                    fmt::format("{}<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
                                i > 0 ? "\n" : "", json(name).dump(), arguments);
                break;
            case ToolCallFormat::Llama3Json:
                text += fmt::format("{}{{\"name\": {}, \"parameters\": {}}}", i > 0 ? "; " : "",
                                    json(name).dump(), arguments);
                break;
            case ToolCallFormat::Mistral:
                text += fmt::format("{}{{\"name\": {}, \"arguments\": {}}}", i > 0 ? ", " : "[",
                                    json(name).dump(), arguments);
                break;
        }
    }
    if (format == ToolCallFormat::Mistral) text = "[TOOL_CALLS]" + text + "]";
    return text;
}

std::string tools_instructions(const nlohmann::ordered_json& tools, ToolCallFormat format) {
    std::string signatures;
    for (const auto& tool : tools) signatures += tool.dump() + "\n";
    std::string how;
    switch (format) {
        case ToolCallFormat::Hermes:
            how =
                "To call a function, write a JSON object with its name and arguments between "
                "<tool_call> and </tool_call>:\n<tool_call>\n{\"name\": \"<function name>\", "
                "\"arguments\": {<arguments>}}\n</tool_call>";
            break;
        case ToolCallFormat::Llama3Json:
            how =
                "To call a function, answer with only a JSON object with its name and "
                "parameters: {\"name\": \"<function name>\", \"parameters\": {<arguments>}}";
            break;
        case ToolCallFormat::Mistral:
            how =
                "To call functions, answer with [TOOL_CALLS] and a JSON list of calls: "
                "[TOOL_CALLS][{\"name\": \"<function name>\", \"arguments\": {<arguments>}}]";
            break;
    }
    return "You can call these functions (one JSON signature per line):\n<tools>\n" + signatures +
           "</tools>\n" + how;
}

std::vector<tokenizer::ChatMessage> template_messages(const json& messages,
                                                      const nlohmann::ordered_json* tools,
                                                      ToolCallFormat format) {
    std::vector<tokenizer::ChatMessage> chat;
    for (const json& message : messages) {
        const std::string role = message["role"].get<std::string>();
        std::string content = message["content"].get<std::string>();
        if (role == "tool") {
            const std::string result = "<tool_response>\n" + content + "\n</tool_response>";
            // Results of one turn's calls go together, as one user turn.
            if (!chat.empty() && chat.back().role == "user" &&
                chat.back().content.rfind("<tool_response>", 0) == 0) {
                chat.back().content += "\n" + result;
            } else {
                chat.push_back({"user", result});
            }
            continue;
        }
        if (const auto calls = message.find("tool_calls"); calls != message.end()) {
            const std::string written = written_calls(*calls, format);
            content = content.empty() ? written : content + "\n" + written;
        }
        chat.push_back({role, std::move(content)});
    }
    if (tools != nullptr) {
        const std::string instructions = tools_instructions(*tools, format);
        if (!chat.empty() && chat.front().role == "system") {
            chat.front().content += "\n\n" + instructions;
        } else {
            chat.insert(chat.begin(), {"system", instructions});
        }
    }
    return chat;
}

// The one place the chat template is applied.
std::string render_chat(const json& messages, const nlohmann::ordered_json* tools,
                        const engine::ModelBundle& bundle) {
    const ToolCallFormat format = chat_features(bundle).tool_calls;
    return engine::require_chat_template(bundle).apply(template_messages(messages, tools, format),
                                                       true);
}

}  // namespace

ChatFeatures chat_features(const engine::ModelBundle& bundle) {
    ChatFeatures features;
    const std::string chat_template =
        bundle.file ? bundle.file->get_string("tokenizer.chat_template").value_or("") : "";
    const std::optional<ToolCallFormat> named =
        tool_call_format_by_name(bundle.chat_options.tool_call_parser);
    features.tool_calls = named ? *named : detect_tool_call_format(chat_template);
    const std::string& reasoning = bundle.chat_options.reasoning_parser;
    features.reasoning =
        reasoning.empty() ? template_reasons(chat_template) : reasoning == "deepseek_r1";
    return features;
}

std::vector<engine::TokenId> chat_prompt_tokens(const json& body,
                                                const engine::ModelBundle& bundle,
                                                const nlohmann::ordered_json* written) {
    const json messages = normalized_messages(body);
    const std::optional<ToolRequest> tools = parse_tool_request(SchemaSource(body, written));
    try {
        const std::string text = render_chat(messages, tools ? &tools->tools : nullptr, bundle);
        return bundle.tokenizer->encode(text, true, true);
    } catch (const ApiError&) {
        throw;
    } catch (const util::InputError& error) {
        invalid_param("messages", error.what());
    }
}

}  // namespace ladder::server
