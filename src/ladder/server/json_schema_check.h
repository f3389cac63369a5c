// The JSON Schema keywords structured output enforces, checked before a schema
// reaches the grammar engine: a keyword it would not enforce (xgrammar skips
// some without a word) is refused with its name and place, never dropped.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ladder::server {

struct SchemaProblem {
    std::string pointer;  // JSON pointer of the offending schema ("" for the root)
    std::string message;  // names the keyword
};

// Enforced: type (a name or a list), enum, const, anyOf, oneOf, allOf, $ref
// to "#..." with $defs/definitions (recursion included); properties,
// required, additionalProperties, patternProperties, propertyNames,
// minProperties, maxProperties, unevaluatedProperties; items, prefixItems,
// minItems, maxItems, unevaluatedItems; minLength, maxLength, pattern,
// format (date, time, date-time, duration, email, hostname, ipv4, ipv6, uri,
// uri-reference, uri-template, uuid, json-pointer, relative-json-pointer);
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, and an integer's
// multipleOf. Annotations (title, description, default, examples, ...) are
// accepted. Returns the first problem, or nothing.
std::optional<SchemaProblem> check_json_schema(const nlohmann::json& schema);

}  // namespace ladder::server
