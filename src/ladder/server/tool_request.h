// A chat request's tools: `tools`, `tool_choice` and `parallel_tool_calls`
// checked, and the grammar that holds the model to well-formed calls in its
// family's format: every call for `required` or a named function, the rest
// of a call once the model starts one for `auto` (a lazy grammar, triggered
// by the format's marker).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ladder/server/structured_output.h"
#include "ladder/server/tool_call_parser.h"

namespace ladder::server {

enum class ToolChoice { None, Auto, Required, Function };

struct ToolFunction {
    std::string name;
    nlohmann::ordered_json parameters;  // a JSON Schema for the arguments, in written order
};

struct ToolRequest {
    nlohmann::ordered_json tools;  // as given (checked, in written order), for the chat template
    std::vector<ToolFunction> functions;
    ToolChoice choice = ToolChoice::Auto;
    std::string function;  // ToolChoice::Function: its name
    bool parallel = true;
};

// Nothing when the body has no tools (or an empty list). Throws ApiError 400
// naming the field: a malformed tool, a parameters schema with a keyword
// that would not be enforced, tool_choice naming a function not in tools,
// tool_choice without tools.
std::optional<ToolRequest> parse_tool_request(const SchemaSource& source);

// The grammar for the calls (an xgrammar structural tag), or nothing for
// tool_choice none. answer: the grammar of a text answer (response_format),
// which `auto` allows instead of calls; ApiError 400 for one that cannot be
// combined (only JSON answers can).
std::optional<OutputGrammar> tool_call_grammar(const ToolRequest& request, ToolCallFormat format,
                                               const std::optional<OutputGrammar>& answer);

}  // namespace ladder::server
