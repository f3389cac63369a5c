// Each known chat format written out to render what its model family's Jinja
// template renders, byte for byte, and detection of the format from the
// template text. The golden test renders the real templates with jinja2.
#include "ladder/tokenizer/chat_template.h"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "ladder/util/error.h"

namespace ladder::tokenizer {
namespace {

struct FormatInfo {
    ChatFormat format;
    std::string_view name;
    std::string_view bos;  // the usual spelling of BOS and EOS in this family
    std::string_view eos;
};

constexpr std::array kFormats = {
    FormatInfo{ChatFormat::ChatML, "chatml", "", ""},
    FormatInfo{ChatFormat::Llama2, "llama2", "<s>", "</s>"},
    FormatInfo{ChatFormat::Llama3, "llama3", "<|begin_of_text|>", "<|eot_id|>"},
    FormatInfo{ChatFormat::MistralV1, "mistral-v1", "<s>", "</s>"},
    FormatInfo{ChatFormat::MistralV3, "mistral-v3", "<s>", "</s>"},
    FormatInfo{ChatFormat::MistralV3Tekken, "mistral-v3-tekken", "<s>", "</s>"},
    FormatInfo{ChatFormat::MistralV7, "mistral-v7", "<s>", "</s>"},
    FormatInfo{ChatFormat::Gemma, "gemma", "<bos>", "<eos>"},
};

constexpr auto kNames = [] {
    std::array<std::string_view, kFormats.size()> names{};
    for (std::size_t i = 0; i < kFormats.size(); ++i) names[i] = kFormats[i].name;
    return names;
}();

const FormatInfo& info_of(ChatFormat format) {
    for (const FormatInfo& info : kFormats) {
        if (info.format == format) return info;
    }
    return kFormats[0];  // unreachable: every enumerator has a row
}

std::string known_names_list() {
    std::string list;
    for (std::string_view name : kNames) {
        if (!list.empty()) list += ", ";
        list += name;
    }
    return list;
}

bool contains(std::string_view text, std::string_view marker) {
    return text.find(marker) != std::string_view::npos;
}

// Byte length of the whitespace code point at s[i], or 0. Whitespace is what
// Python's str.isspace() accepts, since Jinja's trim filter and str.strip()
// are Python's.
std::size_t whitespace_at(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) return 1;
    static constexpr std::string_view kMultibyte[] = {
        "\xc2\x85",      // U+0085 next line
        "\xc2\xa0",      // U+00A0 no-break space
        "\xe1\x9a\x80",  // U+1680 ogham space mark
        "\xe2\x80\xa8",  // U+2028 line separator
        "\xe2\x80\xa9",  // U+2029 paragraph separator
        "\xe2\x80\xaf",  // U+202F narrow no-break space
        "\xe2\x81\x9f",  // U+205F medium mathematical space
        "\xe3\x80\x80",  // U+3000 ideographic space
    };
    const std::string_view rest = s.substr(i);
    for (std::string_view sequence : kMultibyte) {
        if (rest.starts_with(sequence)) return sequence.size();
    }
    // U+2000..U+200A: the typographic spaces.
    if (rest.size() >= 3 && c == 0xe2 && static_cast<unsigned char>(rest[1]) == 0x80 &&
        static_cast<unsigned char>(rest[2]) <= 0x8a) {
        return 3;
    }
    return 0;
}

std::string_view python_strip(std::string_view s) {
    while (!s.empty()) {
        const std::size_t n = whitespace_at(s, 0);
        if (n == 0) break;
        s.remove_prefix(n);
    }
    while (!s.empty()) {
        std::size_t stripped = 0;
        for (std::size_t n = 1; n <= 3 && n <= s.size(); ++n) {
            if (whitespace_at(s, s.size() - n) == n) {
                stripped = n;
                break;
            }
        }
        if (stripped == 0) break;
        s.remove_suffix(stripped);
    }
    return s;
}

// The body of the Jinja string literal whose opening quote is at text[open],
// with Python's common escapes undone; nullopt when the literal is not closed.
std::optional<std::string> string_literal_at(std::string_view text, std::size_t open) {
    const char quote = text[open];
    std::string body;
    for (std::size_t i = open + 1; i < text.size(); ++i) {
        const char c = text[i];
        if (c == quote) return body;
        if (c != '\\' || i + 1 == text.size()) {
            body += c;
            continue;
        }
        const char escaped = text[++i];
        switch (escaped) {
            case 'n':
                body += '\n';
                break;
            case 't':
                body += '\t';
                break;
            case 'r':
                body += '\r';
                break;
            case '\\':
            case '\'':
            case '"':
                body += escaped;
                break;
            default:  // Python keeps an unknown escape as written
                body += '\\';
                body += escaped;
                break;
        }
    }
    return std::nullopt;
}

// A ChatML template that injects a default system message writes it as one
// string literal holding a whole system turn (SmolLM2: "<|im_start|>system\n
// You are a helpful AI assistant named SmolLM...<|im_end|>\n"), rendered only
// when the conversation has no system message of its own. The literal that
// opens a caller's system turn ("<|im_start|>system\n" + content) is not one.
std::optional<std::string> find_default_system(std::string_view jinja_template) {
    constexpr std::string_view kOpen = "<|im_start|>system\n";
    constexpr std::string_view kClose = "<|im_end|>";
    constexpr std::string_view kMarker = "<|im_start|>system";
    for (std::size_t at = jinja_template.find(kMarker); at != std::string_view::npos;
         at = jinja_template.find(kMarker, at + 1)) {
        if (at == 0 || (jinja_template[at - 1] != '\'' && jinja_template[at - 1] != '"')) {
            continue;
        }
        std::optional<std::string> literal = string_literal_at(jinja_template, at - 1);
        if (!literal || !literal->starts_with(kOpen)) continue;
        std::string_view turn(*literal);
        if (turn.ends_with('\n')) turn.remove_suffix(1);
        if (!turn.ends_with(kClose)) continue;
        turn = turn.substr(kOpen.size(), turn.size() - kOpen.size() - kClose.size());
        if (contains(turn, "<|im_start|>") || contains(turn, kClose)) continue;
        return std::string(turn);
    }
    return std::nullopt;
}

// Markers and their order follow llama.cpp's llm_chat_detect_template,
// restricted to the formats ladder writes.
std::optional<ChatFormat> detect_format(std::string_view t) {
    if (contains(t, "<|im_start|>")) {
        // Phi-4 and SmolVLM use <|im_start|> too, but are not ChatML.
        if (contains(t, "<|im_sep|>") || contains(t, "<end_of_utterance>")) return std::nullopt;
        return ChatFormat::ChatML;
    }
    if (t.starts_with("mistral") || contains(t, "[INST]")) {
        if (contains(t, "[SYSTEM_PROMPT]")) return ChatFormat::MistralV7;
        if (contains(t, "' [INST] ' + system_message") || contains(t, "[AVAILABLE_TOOLS]")) {
            if (contains(t, " [INST]")) return ChatFormat::MistralV1;
            if (contains(t, "\"[INST]\"")) return ChatFormat::MistralV3Tekken;
            return ChatFormat::MistralV3;
        }
        return ChatFormat::Llama2;
    }
    if (contains(t, "<start_of_turn>")) return ChatFormat::Gemma;
    if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) {
        return ChatFormat::Llama3;
    }
    return std::nullopt;
}

void check_roles(std::span<const ChatMessage> messages) {
    if (messages.empty()) util::fail("a chat needs at least one message");
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const std::string& role = messages[i].role;
        if (role != "system" && role != "user" && role != "assistant") {
            util::fail("messages[{}] has role '{}'; expected system, user or assistant", i, role);
        }
    }
}

bool starts_with_system(std::span<const ChatMessage> messages) {
    return messages.front().role == "system";
}

// Llama 2, Mistral v1/v3 and Gemma templates reject any other order (their
// Jinja raises "Conversation roles must alternate user/assistant/...").
void check_alternating(std::span<const ChatMessage> messages, std::string_view format) {
    const std::size_t first = starts_with_system(messages) ? 1 : 0;
    for (std::size_t i = first; i < messages.size(); ++i) {
        const std::string& role = messages[i].role;
        if (role == "system") {
            util::fail("chat template '{}' accepts a system message only first (messages[{}])",
                       format, i);
        }
        const std::string_view expected = (i - first) % 2 == 0 ? "user" : "assistant";
        if (role != expected) {
            util::fail(
                "chat template '{}' needs user and assistant messages alternating, starting "
                "with user, after an optional system message (messages[{}] is '{}')",
                format, i, role);
        }
    }
}

std::string apply_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt,
                         const std::optional<std::string>& default_system) {
    std::string out;
    if (default_system && !starts_with_system(messages)) {
        out += "<|im_start|>system\n" + *default_system + "<|im_end|>\n";
    }
    for (const ChatMessage& m : messages) {
        out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    }
    if (add_generation_prompt) out += "<|im_start|>assistant\n";
    return out;
}

std::string apply_llama2(std::span<const ChatMessage> messages, const ChatSpecialTokens& tokens) {
    check_alternating(messages, "llama2");
    const std::size_t first = starts_with_system(messages) ? 1 : 0;
    std::string out;
    for (std::size_t i = first; i < messages.size(); ++i) {
        std::string content = messages[i].content;
        if (i == first && first == 1) {
            content = "<<SYS>>\n" + messages[0].content + "\n<</SYS>>\n\n" + content;
        }
        // The template strips the joined text, so a system block keeps the
        // user's leading whitespace.
        const std::string_view stripped = python_strip(content);
        if (messages[i].role == "user") {
            if (i != first) out += tokens.bos;  // the leading BOS is the tokenizer's
            out.append("[INST] ").append(stripped).append(" [/INST]");
        } else {
            out.append(" ").append(stripped).append(" ").append(tokens.eos);
        }
    }
    return out;
}

std::string apply_llama3(std::span<const ChatMessage> messages, bool add_generation_prompt) {
    std::string out;
    for (const ChatMessage& m : messages) {
        out.append("<|start_header_id|>").append(m.role).append("<|end_header_id|>\n\n");
        out.append(python_strip(m.content)).append("<|eot_id|>");
    }
    if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

std::string apply_mistral_v1(std::span<const ChatMessage> messages,
                             const ChatSpecialTokens& tokens) {
    check_alternating(messages, "mistral-v1");
    const std::size_t first = starts_with_system(messages) ? 1 : 0;
    std::string out;
    for (std::size_t i = first; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        if (m.role == "user") {
            out += " [INST] ";
            if (i == first && first == 1) out += messages[0].content + "\n\n";
            out += m.content + " [/INST]";
        } else {
            out += " " + m.content + tokens.eos;
        }
    }
    return out;
}

// v3 and v3-tekken put the system message before the last user message, and
// drop it when the conversation ends with the assistant.
std::string apply_mistral_v3(std::span<const ChatMessage> messages, const ChatSpecialTokens& tokens,
                             bool tekken) {
    check_alternating(messages, tekken ? "mistral-v3-tekken" : "mistral-v3");
    const std::size_t first = starts_with_system(messages) ? 1 : 0;
    const std::string_view inst = tekken ? "[INST]" : "[INST] ";
    std::string out;
    for (std::size_t i = first; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        if (m.role == "user") {
            out += inst;
            if (i + 1 == messages.size() && first == 1) out += messages[0].content + "\n\n";
            out += m.content + "[/INST]";
        } else if (tekken) {
            out += m.content + tokens.eos;
        } else {
            out.append(" ").append(python_strip(m.content)).append(tokens.eos);
        }
    }
    return out;
}

std::string apply_mistral_v7(std::span<const ChatMessage> messages,
                             const ChatSpecialTokens& tokens) {
    std::string out;
    for (const ChatMessage& m : messages) {
        if (m.role == "system") {
            out += "[SYSTEM_PROMPT] " + m.content + "[/SYSTEM_PROMPT]";
        } else if (m.role == "user") {
            out += "[INST] " + m.content + "[/INST]";
        } else {
            out += " " + m.content + tokens.eos;
        }
    }
    return out;
}

std::string apply_gemma(std::span<const ChatMessage> messages, bool add_generation_prompt) {
    check_alternating(messages, "gemma");
    const std::size_t first = starts_with_system(messages) ? 1 : 0;
    std::string out;
    for (std::size_t i = first; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        out += "<start_of_turn>";
        out += m.role == "assistant" ? "model" : m.role;
        out += "\n";
        // Gemma has no system turn: the system text (untrimmed) opens the first user turn.
        if (i == first && first == 1) out += messages[0].content + "\n\n";
        out.append(python_strip(m.content)).append("<end_of_turn>\n");
    }
    if (add_generation_prompt) out += "<start_of_turn>model\n";
    return out;
}

}  // namespace

ChatTemplate::ChatTemplate(ChatFormat format, ChatSpecialTokens tokens)
    : format_(format), tokens_(std::move(tokens)) {
    const FormatInfo& info = info_of(format);
    if (tokens_.bos.empty()) tokens_.bos = info.bos;
    if (tokens_.eos.empty()) tokens_.eos = info.eos;
}

ChatTemplate ChatTemplate::by_name(std::string_view name, ChatSpecialTokens tokens) {
    for (const FormatInfo& info : kFormats) {
        if (info.name == name) return ChatTemplate(info.format, std::move(tokens));
    }
    util::fail("unknown chat template '{}' (known: {})", name, known_names_list());
}

ChatTemplate ChatTemplate::detect(std::string_view jinja_template, ChatSpecialTokens tokens) {
    if (python_strip(jinja_template).empty()) {
        util::fail(
            "the model has no chat template; choose one with --chat-template NAME "
            "(known: {})",
            known_names_list());
    }
    for (const FormatInfo& info : kFormats) {
        if (info.name == jinja_template) return ChatTemplate(info.format, std::move(tokens));
    }
    const std::optional<ChatFormat> format = detect_format(jinja_template);
    if (!format) {
        util::fail(
            "the model's chat template is not one ladder knows; choose one with "
            "--chat-template NAME (known: {})",
            known_names_list());
    }
    ChatTemplate chat_template(*format, std::move(tokens));
    if (*format == ChatFormat::ChatML) {
        chat_template.default_system_ = find_default_system(jinja_template);
    }
    return chat_template;
}

std::span<const std::string_view> ChatTemplate::known_names() { return kNames; }

std::string_view ChatTemplate::name() const { return info_of(format_).name; }

std::string ChatTemplate::apply(std::span<const ChatMessage> messages,
                                bool add_generation_prompt) const {
    check_roles(messages);
    switch (format_) {
        case ChatFormat::ChatML:
            return apply_chatml(messages, add_generation_prompt, default_system_);
        case ChatFormat::Llama2:
            return apply_llama2(messages, tokens_);
        case ChatFormat::Llama3:
            return apply_llama3(messages, add_generation_prompt);
        case ChatFormat::MistralV1:
            return apply_mistral_v1(messages, tokens_);
        case ChatFormat::MistralV3:
            return apply_mistral_v3(messages, tokens_, false);
        case ChatFormat::MistralV3Tekken:
            return apply_mistral_v3(messages, tokens_, true);
        case ChatFormat::MistralV7:
            return apply_mistral_v7(messages, tokens_);
        case ChatFormat::Gemma:
            return apply_gemma(messages, add_generation_prompt);
    }
    return {};
}

}  // namespace ladder::tokenizer
