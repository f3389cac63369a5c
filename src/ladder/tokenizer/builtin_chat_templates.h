// The chat templates ladder carries for model files without one: each the
// real Jinja template of a model family, from builtin_chat_templates/<name>.jinja.
#pragma once

#include <span>
#include <string_view>

namespace ladder::tokenizer {

struct BuiltinChatTemplate {
    std::string_view name;
    std::string_view source;
};

// Sorted by name.
std::span<const BuiltinChatTemplate> builtin_chat_templates();

}  // namespace ladder::tokenizer
