// Between JSON and template values: the inputs a chat template gets (messages,
// tools, keyword arguments) and the tojson filter, which writes what Python's
// json.dumps writes, as transformers defines tojson for chat templates.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

// Objects keep their key order (templates print tools' schemas in the order
// the client sent them). Throws TemplateError past Value::kMaxDepth.
Value from_json(const nlohmann::ordered_json& json);

// json.dumps(value, ensure_ascii, indent, separators, sort_keys).
struct JsonDumpOptions {
    bool ensure_ascii = false;
    std::optional<std::string> indent;  // nullopt: one line
    // Python's defaults: ", " and ": " on one line, "," and ": " indented.
    std::optional<std::string> item_separator;
    std::optional<std::string> key_separator;
    bool sort_keys = false;
};

// Throws TemplateError for what JSON cannot hold (undefined, macros, ...).
std::string to_json(const Value& value, const JsonDumpOptions& options);

}  // namespace ladder::tokenizer::jinja
