// One fuzz input for the chat template interpreter: a template's source, a
// NUL byte, then the conversation as JSON ({"messages", "tools",
// "add_generation_prompt", "kwargs"}; anything unreadable renders a fixed
// conversation). Parsing and rendering may fail only with util::InputError;
// anything else (a crash, another exception, a hang past the limits) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ladder/tokenizer/chat_template.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer::fuzz {

inline ChatInputs fuzz_conversation(std::string_view text) {
    ChatInputs inputs;
    inputs.messages = nlohmann::ordered_json::array(
        {{{"role", "system"}, {"content", "Be brief."}},
         {{"role", "user"}, {"content", "Weather in Paris?"}},
         {{"role", "assistant"},
          {"content", ""},
          {"tool_calls",
           {{{"id", "call12345"},
             {"type", "function"},
             {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}}}}},
         {{"role", "tool"}, {"tool_call_id", "call12345"}, {"content", "21"}}});
    const auto json = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return inputs;
    if (const auto it = json.find("messages"); it != json.end()) inputs.messages = *it;
    if (const auto it = json.find("tools"); it != json.end()) inputs.tools = *it;
    if (const auto it = json.find("add_generation_prompt"); it != json.end() && it->is_boolean()) {
        inputs.add_generation_prompt = it->get<bool>();
    }
    if (const auto it = json.find("kwargs"); it != json.end()) inputs.kwargs = *it;
    return inputs;
}

// Tight limits keep each input fast; the defaults are tested on their own.
inline void render_fuzz_input(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const size_t split = input.find('\0');
    const std::string_view source = input.substr(0, split);
    const std::string_view conversation =
        split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
    jinja::RenderOptions options;
    options.limits.max_output_bytes = 1 << 20;
    options.limits.max_bytes_built = 8 << 20;
    options.limits.max_steps = 200'000;
    options.clock = [] { return std::tm{}; };
    try {
        ChatTemplate chat_template = ChatTemplate::from_source(source, {"<s>", "</s>"});
        chat_template.render(fuzz_conversation(conversation), options);
    } catch (const util::InputError&) {
        // A template or conversation the interpreter refuses, with a message: fine.
    }
}

}  // namespace ladder::tokenizer::fuzz
