// Reads the function calls a model writes into its output, in the format of
// its family, as the text arrives: content goes on as content (minus any
// tail that may start a call), each call comes out as fragments shaped like
// OpenAI's streamed delta.tool_calls. A whole response is the same fragments
// joined, so streamed and whole answers agree to the byte.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/server/json_call_reader.h"

namespace ladder::server {

enum class ToolCallFormat {
    Hermes,      // <tool_call>{"name": ..., "arguments": ...}</tool_call> (Hermes 2 Pro, Qwen2.5)
    Llama3Json,  // {"name": ..., "parameters": ...}, bare or after <|python_tag|>; `;` between
    Mistral,  // [TOOL_CALLS][{"name": ..., "arguments": ...}, ...] or [TOOL_CALLS]name[ARGS]{...}
};

// "hermes", "llama3_json", "mistral" (vLLM's names).
std::string_view tool_call_format_name(ToolCallFormat format);
std::optional<ToolCallFormat> tool_call_format_by_name(std::string_view name);
std::span<const std::string_view> tool_call_format_names();
// The format a chat template's text teaches, as llama.cpp tells them apart by
// their markers; nullopt for a template that shows none of them (or wraps
// another call syntax in the same tags: Qwen3-Coder's <function=...> XML,
// GLM's <arg_key> pairs).
std::optional<ToolCallFormat> detect_tool_call_format(std::string_view chat_template);

// One piece of one call: the first carries id and name (and maybe the start
// of the arguments), the rest only argument text to append.
struct ToolCallFragment {
    int32_t index = 0;
    std::string id;
    std::string name;
    std::string arguments;
};

struct ParsedOutput {
    std::string content;
    std::vector<ToolCallFragment> tool_calls;
};

class ToolCallParser {
public:
    using IdSource = std::function<std::string()>;

    virtual ~ToolCallParser() = default;
    // The next text of the output.
    ParsedOutput push(std::string_view text);
    // The output has ended: what was held back.
    ParsedOutput finish();
    bool found_calls() const { return n_calls_ > 0; }

protected:
    explicit ToolCallParser(IdSource ids) : ids_(std::move(ids)) {}

    // Called with each character of the output; write through the helpers.
    virtual void feed(char c) = 0;
    // The output ended: flush what the format holds.
    virtual void end() = 0;

    // Content the format has decided is content.
    void emit_content(std::string_view text);
    // A new call, numbered in order of appearance.
    void open_call(const std::string& name);
    void append_arguments(std::string_view text);

    // A call object starts (raw: the text that opened it, given back as
    // content should it be no call after all).
    void begin_call(std::string raw);
    // Reads the object: opens the call once its name is known and passes its
    // arguments on. NotACall before a name: its text went out as content.
    JsonCallReader::Status feed_call(char c);
    // The output ended inside the object.
    void end_call();
    // The object being read has opened a call.
    bool call_opened() const { return call_opened_; }

private:
    IdSource ids_;
    ParsedOutput out_;
    std::string held_space_;  // whitespace-only content, kept until more content comes
    int32_t n_calls_ = 0;
    JsonCallReader reader_;
    std::string call_raw_;
    bool call_opened_ = false;
};

// ids: the id of each call ("call_..." for most, 9 characters for Mistral,
// whose templates require that); empty: the format's own kind of random id.
std::unique_ptr<ToolCallParser> make_tool_call_parser(ToolCallFormat format,
                                                      ToolCallParser::IdSource ids = {});

// A random id for a call in this format.
std::string new_tool_call_id(ToolCallFormat format);

}  // namespace ladder::server
