// Chat templates: turns a list of chat messages into the prompt text a model was
// trained on. Known formats are written out by hand (no Jinja engine); detect()
// recognises them from the model's tokenizer.chat_template text.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::tokenizer {

struct ChatMessage {
    std::string role;  // "system", "user" or "assistant"
    std::string content;
};

enum class ChatFormat {
    ChatML,           // <|im_start|>role\n...<|im_end|>\n (SmolLM, Qwen, OpenHermes, ...)
    Llama2,           // Meta's Llama-2-chat: <s>[INST] <<SYS>>...<</SYS>> ... [/INST] ... </s>
    Llama3,           // Meta-Llama-3-Instruct: <|start_header_id|>role<|end_header_id|>\n\n...
    MistralV1,        // " [INST] ... [/INST]", system joins the first user message
    MistralV3,        // "[INST] ...[/INST]", system joins the last user message
    MistralV3Tekken,  // as v3 without the spaces (Mistral Nemo)
    MistralV7,        // [SYSTEM_PROMPT] ...[/SYSTEM_PROMPT] turns of their own
    Gemma,            // <start_of_turn>user|model; system folded into the first user turn
};

// The text of the BOS and EOS tokens a template writes (Llama 2 writes both
// between turns). Empty means the format's usual spelling ("<s>", "</s>", ...).
struct ChatSpecialTokens {
    std::string bos;
    std::string eos;
};

class ChatTemplate {
public:
    // Recognises a template from the text of the GGUF key tokenizer.chat_template
    // by the markers llama.cpp looks for (a known format name is accepted too).
    // A ChatML template that writes a literal default system turn keeps it, to
    // be injected when a conversation does not start with a system message.
    // Throws util::InputError for an empty or unrecognised template, listing
    // the known names for --chat-template.
    static ChatTemplate detect(std::string_view jinja_template, ChatSpecialTokens tokens = {});
    // The --chat-template NAME override. Throws util::InputError for an unknown name.
    static ChatTemplate by_name(std::string_view name, ChatSpecialTokens tokens = {});
    static std::span<const std::string_view> known_names();

    // The exact prompt text the model's Jinja template renders, except that a
    // leading BOS is left out: tokenize it with add_special=true (which adds BOS
    // where the vocabulary wants one) and parse_special=true. For Llama 2 and
    // the Mistral formats the prompt already ends with [/INST], so
    // add_generation_prompt changes nothing. Throws util::InputError for an empty
    // conversation, an unknown role, or a role order the format cannot express
    // (for Llama 2, Mistral v1/v3 and Gemma: an optional first system message,
    // then user and assistant alternating, starting with user).
    std::string apply(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

    ChatFormat format() const { return format_; }
    std::string_view name() const;
    // The default system message a ChatML template injects, if it has one.
    const std::optional<std::string>& default_system() const { return default_system_; }

private:
    ChatTemplate(ChatFormat format, ChatSpecialTokens tokens);

    ChatFormat format_;
    ChatSpecialTokens tokens_;
    std::optional<std::string> default_system_;
};

}  // namespace ladder::tokenizer
