// A chat template is a Jinja template rendered with the variables
// transformers' apply_chat_template passes; this file chooses the template
// (default, tool_use variant or built-in), builds those variables, and
// classifies the template's tool-call format.
#include "ladder/tokenizer/chat_template.h"

#include <algorithm>
#include <array>
#include <utility>

#include "ladder/tokenizer/builtin_chat_templates.h"
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/json.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {
namespace {

constexpr std::string_view kToolUseVariant = "tool_use";

// The variables apply_chat_template always passes; chat_template_kwargs may
// not replace them (Python would fail with "got multiple values").
constexpr std::array<std::string_view, 4> kReservedVariables = {"messages", "tools", "documents",
                                                                "add_generation_prompt"};

std::string builtin_names_list() {
    std::string list;
    for (const BuiltinChatTemplate& entry : builtin_chat_templates()) {
        if (!list.empty()) list += ", ";
        list += entry.name;
    }
    return list;
}

std::shared_ptr<const jinja::Template> parse_template(std::string_view source,
                                                      std::string_view what) {
    try {
        return std::make_shared<const jinja::Template>(source);
    } catch (const jinja::TemplateError& error) {
        util::fail("{}: {}", what, error.what());
    }
}

// The text of the last message, which continue_final_message leaves open
// (its last text part when the content is a list).
std::string final_message_text(const nlohmann::ordered_json& messages) {
    if (!messages.is_array() || messages.empty() || !messages.back().is_object()) {
        util::fail("continue_final_message needs a final message to continue");
    }
    const auto content = messages.back().find("content");
    if (content != messages.back().end() && content->is_string())
        return content->get<std::string>();
    if (content != messages.back().end() && content->is_array()) {
        for (auto part = content->rbegin(); part != content->rend(); ++part) {
            if (part->is_object() && part->contains("text") && (*part)["text"].is_string()) {
                return (*part)["text"].get<std::string>();
            }
        }
    }
    util::fail("continue_final_message needs a final message with text to continue");
}

// transformers' rule: cut the rendering right after the final message's
// text, keeping its trailing whitespace only where the template kept it.
std::string cut_after_final_message(std::string rendered, const std::string& final_text) {
    const std::string stripped = jinja::py::strip(final_text, jinja::py::Side::Both, std::nullopt);
    const std::string left_stripped =
        jinja::py::strip(final_text, jinja::py::Side::Left, std::nullopt);
    const size_t at = rendered.rfind(stripped);
    if (at == std::string::npos) {
        util::fail(
            "continue_final_message: the final message does not appear in the rendered chat "
            "(the template changes or drops it)");
    }
    if (rendered.compare(at, left_stripped.size(), left_stripped) == 0 &&
        left_stripped == final_text) {
        rendered.resize(at + left_stripped.size());
    } else {
        rendered.resize(at + stripped.size());
    }
    return rendered;
}

}  // namespace

ChatTemplate::ChatTemplate(std::shared_ptr<const jinja::Template> source, ChatSpecialTokens tokens,
                           std::string name)
    : default_(std::move(source)), tokens_(std::move(tokens)), name_(std::move(name)) {}

ChatTemplate ChatTemplate::from_source(std::string_view source, ChatSpecialTokens tokens,
                                       std::string name) {
    if (jinja::py::strip(source, jinja::py::Side::Both, std::nullopt).empty()) {
        util::fail("{} is empty; choose one with --chat-template NAME (built in: {})", name,
                   builtin_names_list());
    }
    return ChatTemplate(parse_template(source, name), std::move(tokens), std::move(name));
}

ChatTemplate ChatTemplate::builtin(std::string_view name, ChatSpecialTokens tokens) {
    const std::string_view source = builtin_source(name);
    if (source.empty()) {
        util::fail("unknown chat template '{}' (built in: {}; or give --chat-template-file FILE)",
                   name, builtin_names_list());
    }
    return ChatTemplate(parse_template(source, name), std::move(tokens), std::string(name));
}

std::span<const std::string_view> ChatTemplate::builtin_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const BuiltinChatTemplate& entry : builtin_chat_templates()) out.push_back(entry.name);
        return out;
    }();
    return names;
}

std::string_view ChatTemplate::builtin_source(std::string_view name) {
    for (const BuiltinChatTemplate& entry : builtin_chat_templates()) {
        if (entry.name == name) return entry.source;
    }
    return {};
}

bool ChatTemplate::is_reserved_variable(std::string_view name) {
    return std::find(kReservedVariables.begin(), kReservedVariables.end(), name) !=
           kReservedVariables.end();
}

void ChatTemplate::add_variant(const std::string& name, std::string_view source) {
    variants_[name] = parse_template(source, fmt::format("{} '{}'", name_, name));
}

std::vector<std::string> ChatTemplate::variant_names() const {
    std::vector<std::string> names;
    for (const auto& [name, source] : variants_) names.push_back(name);
    return names;
}

const jinja::Template& ChatTemplate::choose(const ChatInputs& inputs) const {
    // transformers: a request with tools uses the "tool_use" template if the
    // model has one, every other request the default.
    if (!inputs.tools.is_null()) {
        if (const auto variant = variants_.find(std::string(kToolUseVariant));
            variant != variants_.end()) {
            return *variant->second;
        }
    }
    return *default_;
}

std::string ChatTemplate::render(const ChatInputs& inputs,
                                 const jinja::RenderOptions& options) const {
    if (inputs.continue_final_message && inputs.add_generation_prompt) {
        util::fail(
            "continue_final_message and add_generation_prompt cannot both be set: the first "
            "continues the last message, the second starts a new one");
    }
    if (!inputs.kwargs.is_object()) util::fail("chat_template_kwargs must be an object");
    std::vector<std::pair<std::string, jinja::Value>> variables;
    variables.emplace_back("bos_token", jinja::Value::string(tokens_.bos));
    variables.emplace_back("eos_token", jinja::Value::string(tokens_.eos));
    for (const auto& [key, value] : inputs.kwargs.items()) {
        if (is_reserved_variable(key)) util::fail("chat_template_kwargs may not set '{}'", key);
        variables.emplace_back(key, jinja::from_json(value));
    }
    variables.emplace_back("messages", jinja::from_json(inputs.messages));
    variables.emplace_back("tools", jinja::from_json(inputs.tools));
    variables.emplace_back("documents", jinja::Value::none());
    variables.emplace_back("add_generation_prompt",
                           jinja::Value::boolean(inputs.add_generation_prompt));
    std::string rendered;
    try {
        rendered = choose(inputs).render(variables, options);
    } catch (const jinja::TemplateError& error) {
        if (error.raised_by_template()) throw;
        util::fail("{}: {}", name_, error.what());
    }
    if (inputs.continue_final_message) {
        return cut_after_final_message(std::move(rendered), final_message_text(inputs.messages));
    }
    return rendered;
}

std::string ChatTemplate::apply(std::span<const ChatMessage> messages,
                                bool add_generation_prompt) const {
    ChatInputs inputs;
    for (const ChatMessage& message : messages) {
        inputs.messages.push_back({{"role", message.role}, {"content", message.content}});
    }
    inputs.add_generation_prompt = add_generation_prompt;
    return render(inputs);
}

std::vector<TokenId> ChatTemplate::encode(const Tokenizer& tokenizer, std::string_view rendered,
                                          bool add_special) const {
    // The template writes BOS itself where its model wants one; the
    // tokenizer would add another. Like llama.cpp, drop the written one.
    const Vocabulary& vocabulary = tokenizer.vocabulary();
    if (add_special && vocabulary.add_bos.value_or(false) && !tokens_.bos.empty() &&
        rendered.starts_with(tokens_.bos)) {
        rendered.remove_prefix(tokens_.bos.size());
    }
    return tokenizer.encode(rendered, add_special, /*parse_special=*/true);
}

}  // namespace ladder::tokenizer
