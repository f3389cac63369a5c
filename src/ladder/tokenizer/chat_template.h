// Chat templates: a conversation (messages, tools, settings) -> the prompt
// text a model was trained on, by rendering the model's own Jinja template
// (tokenizer.chat_template in its GGUF) with the Jinja interpreter in jinja/,
// exactly as transformers' apply_chat_template renders it. Built-in templates
// serve files that have none (--chat-template NAME).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ladder/tokenizer/jinja/template.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::tokenizer {

// One message for callers that have only text (the CLI's chat and run).
struct ChatMessage {
    std::string role;
    std::string content;
};

// What the template is given, as transformers passes it.
struct ChatInputs {
    // OpenAI-style messages: role, content (a string), and where present
    // name, tool_calls (with function.arguments as a JSON object),
    // tool_call_id, reasoning_content.
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    // Tool definitions ({"type": "function", "function": {...}}); null: none,
    // which the template sees as tools = none.
    nlohmann::ordered_json tools;
    bool add_generation_prompt = true;
    // The prompt ends inside the last (assistant) message, for the model to
    // continue it: what follows that message's text is cut off.
    bool continue_final_message = false;
    // Further template variables (chat_template_kwargs: enable_thinking, ...).
    nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
};

// The text of the BOS and EOS tokens, which templates write themselves.
struct ChatSpecialTokens {
    std::string bos;
    std::string eos;
};

class ChatTemplate {
public:
    // A template's source. Throws util::InputError naming the syntax error.
    static ChatTemplate from_source(std::string_view source, ChatSpecialTokens tokens,
                                    std::string name = "the model's chat template");
    // A built-in template (--chat-template NAME): the real template of a
    // model family. Throws util::InputError for an unknown name, listing them.
    static ChatTemplate builtin(std::string_view name, ChatSpecialTokens tokens);
    static std::span<const std::string_view> builtin_names();
    static std::string_view builtin_source(std::string_view name);  // empty if unknown
    // A variable render() sets itself (messages, tools, documents,
    // add_generation_prompt), which ChatInputs::kwargs may not set.
    static bool is_reserved_variable(std::string_view name);

    // A named variant (tokenizer.chat_template.<name>); one called "tool_use"
    // renders requests that bring tools, as transformers chooses it.
    void add_variant(const std::string& name, std::string_view source);
    std::vector<std::string> variant_names() const;

    // The prompt text, exactly what Python's jinja2 renders (a leading BOS
    // included when the template writes one: encode() takes care of it).
    // Throws util::InputError: with the template's own message when it
    // raises (raise_exception), else naming what failed and where.
    std::string render(const ChatInputs& inputs, const jinja::RenderOptions& options = {}) const;
    // One user or system turn after another, as the CLI has them.
    std::string apply(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

    // Token ids of a rendered prompt, with control tokens recognised. With
    // add_special, BOS is added where the vocabulary wants it, and a BOS the
    // template wrote itself is not doubled (as llama.cpp does).
    std::vector<TokenId> encode(const Tokenizer& tokenizer, std::string_view rendered,
                                bool add_special = true) const;

    const std::string& name() const { return name_; }
    const std::string& source() const { return default_->source(); }
    const ChatSpecialTokens& special_tokens() const { return tokens_; }

private:
    ChatTemplate(std::shared_ptr<const jinja::Template> source, ChatSpecialTokens tokens,
                 std::string name);
    const jinja::Template& choose(const ChatInputs& inputs) const;

    std::shared_ptr<const jinja::Template> default_;
    std::map<std::string, std::shared_ptr<const jinja::Template>> variants_;
    ChatSpecialTokens tokens_;
    std::string name_;
};

}  // namespace ladder::tokenizer
