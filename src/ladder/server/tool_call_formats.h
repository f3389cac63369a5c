// The parser of each tool-call format (tool_call_parser.h), one file each.
#pragma once

#include <memory>

#include "ladder/server/tool_call_parser.h"

namespace ladder::server {

std::unique_ptr<ToolCallParser> make_hermes_parser(ToolCallParser::IdSource ids);
std::unique_ptr<ToolCallParser> make_llama3_json_parser(ToolCallParser::IdSource ids);
std::unique_ptr<ToolCallParser> make_mistral_parser(ToolCallParser::IdSource ids);

}  // namespace ladder::server
