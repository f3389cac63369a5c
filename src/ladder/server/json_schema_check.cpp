#include "ladder/server/json_schema_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace ladder::server {

namespace {

using json = nlohmann::json;

// Keywords that say what a schema is for, not what it allows.
constexpr std::array<std::string_view, 11> kAnnotations = {
    "title",     "description", "default", "examples",      "deprecated",    "readOnly",
    "writeOnly", "$comment",    "$schema", "discriminator", "contentSchema",
};
// A schema's own subschemas by name.
constexpr std::array<std::string_view, 4> kSchemaMaps = {"properties", "patternProperties", "$defs",
                                                         "definitions"};
constexpr std::array<std::string_view, 5> kSchemaValues = {
    "additionalProperties", "propertyNames", "unevaluatedProperties", "items", "unevaluatedItems"};
constexpr std::array<std::string_view, 4> kSchemaLists = {"anyOf", "oneOf", "allOf", "prefixItems"};
constexpr std::array<std::string_view, 6> kCounts = {"minProperties", "maxProperties", "minItems",
                                                     "maxItems",      "minLength",     "maxLength"};
constexpr std::array<std::string_view, 4> kBounds = {"minimum", "maximum", "exclusiveMinimum",
                                                     "exclusiveMaximum"};
constexpr std::array<std::string_view, 7> kTypes = {"string", "number", "integer", "boolean",
                                                    "null",   "array",  "object"};
constexpr std::array<std::string_view, 14> kFormats = {"date",         "time",
                                                       "date-time",    "duration",
                                                       "email",        "hostname",
                                                       "ipv4",         "ipv6",
                                                       "uri",          "uri-reference",
                                                       "uri-template", "uuid",
                                                       "json-pointer", "relative-json-pointer"};
// Known keywords whose constraint the grammar would not enforce.
constexpr std::array<std::string_view, 17> kUnenforced = {"not",
                                                          "if",
                                                          "then",
                                                          "else",
                                                          "dependentRequired",
                                                          "dependentSchemas",
                                                          "dependencies",
                                                          "uniqueItems",
                                                          "contains",
                                                          "minContains",
                                                          "maxContains",
                                                          "additionalItems",
                                                          "$anchor",
                                                          "$dynamicRef",
                                                          "$recursiveRef",
                                                          "contentEncoding",
                                                          "contentMediaType"};
// The most integer an integer multipleOf may be (the grammar unrolls a
// remainder automaton of that many states).
constexpr int64_t kMaxMultipleOf = 1024;
constexpr int kMaxDepth = 128;

template <size_t N>
bool one_of(const std::array<std::string_view, N>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string escape_pointer_token(const std::string& token) {
    std::string out;
    for (char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

class SchemaChecker {
public:
    std::optional<SchemaProblem> problem;

    void check(const json& schema, const std::string& pointer, int depth, bool root) {
        if (problem) return;
        if (depth > kMaxDepth)
            return fail(pointer, fmt::format("nested deeper than {} levels", kMaxDepth));
        if (schema.is_boolean()) return;
        if (!schema.is_object()) return fail(pointer, "a schema must be an object or a boolean");
        for (const auto& [key, value] : schema.items()) {
            check_keyword(schema, key, value, pointer, depth, root);
            if (problem) return;
        }
        check_combinations(schema, pointer);
    }

private:
    void fail(const std::string& pointer, std::string message) {
        if (!problem) problem = SchemaProblem{pointer, std::move(message)};
    }

    void check_keyword(const json& schema, const std::string& key, const json& value,
                       const std::string& pointer, int depth, bool root) {
        const std::string here = pointer + "/" + escape_pointer_token(key);
        if (one_of(kAnnotations, key) || (key == "$id" && root)) return;
        if (one_of(kSchemaMaps, key)) {
            if (!value.is_object()) return fail(here, fmt::format("'{}' must be an object", key));
            for (const auto& [name, sub] : value.items()) {
                check(sub, here + "/" + escape_pointer_token(name), depth + 1, false);
            }
            return;
        }
        if (one_of(kSchemaValues, key)) {
            if (key == "items" && value.is_array()) {
                return fail(here,
                            "'items' as a list (draft 4 tuples) is not supported: use "
                            "'prefixItems'");
            }
            return check(value, here, depth + 1, false);
        }
        if (one_of(kSchemaLists, key)) {
            if (!value.is_array() || value.empty()) {
                return fail(here, fmt::format("'{}' must be a non-empty list of schemas", key));
            }
            for (size_t i = 0; i < value.size(); ++i) {
                check(value[i], fmt::format("{}/{}", here, i), depth + 1, false);
            }
            return;
        }
        if (one_of(kUnenforced, key)) {
            return fail(here, fmt::format("the keyword '{}' is not supported", key));
        }
        if (one_of(kCounts, key)) {
            if (!value.is_number_integer() || value.get<int64_t>() < 0) {
                return fail(here, fmt::format("'{}' must be a non-negative integer", key));
            }
            return;
        }
        if (one_of(kBounds, key)) {
            if (!value.is_number()) {
                return fail(here, fmt::format("'{}' must be a number (a boolean is draft 4's "
                                              "form, which is not supported)",
                                              key));
            }
            return;
        }
        if (key == "type") return check_type(value, here);
        if (key == "format") {
            if (!value.is_string() || !one_of(kFormats, value.get<std::string>())) {
                return fail(here, fmt::format("the format {} is not supported (supported: date, "
                                              "time, date-time, duration, email, hostname, ipv4, "
                                              "ipv6, uri, uri-reference, uri-template, uuid, "
                                              "json-pointer, relative-json-pointer)",
                                              value.dump()));
            }
            return;
        }
        if (key == "pattern") {
            if (!value.is_string()) return fail(here, "'pattern' must be a string");
            return;
        }
        if (key == "required") {
            if (!value.is_array() || !std::all_of(value.begin(), value.end(),
                                                  [](const json& v) { return v.is_string(); })) {
                return fail(here, "'required' must be a list of property names");
            }
            return;
        }
        if (key == "enum") {
            if (!value.is_array() || value.empty())
                return fail(here, "'enum' must be a non-empty list");
            return;
        }
        if (key == "const") return;
        if (key == "$ref") {
            if (!value.is_string() || value.get<std::string>().rfind('#', 0) != 0) {
                return fail(here, "'$ref' must point into this schema (\"#/$defs/...\")");
            }
            return;
        }
        if (key == "multipleOf") return check_multiple_of(schema, value, here);
        fail(here, fmt::format("the keyword '{}' is not supported", key));
    }

    void check_type(const json& value, const std::string& here) {
        const auto known = [](const json& name) {
            return name.is_string() && one_of(kTypes, name.get<std::string>());
        };
        if (known(value)) return;
        if (value.is_array() && !value.empty() && std::all_of(value.begin(), value.end(), known)) {
            return;
        }
        fail(here, fmt::format("'type' must be one of string, number, integer, boolean, null, "
                               "array, object, or a list of them (got {})",
                               value.dump()));
    }

    void check_multiple_of(const json& schema, const json& value, const std::string& here) {
        const auto type = schema.find("type");
        const bool integer = type != schema.end() && type->is_string() && *type == "integer";
        if (!integer || !value.is_number_integer() || value.get<int64_t>() < 1 ||
            value.get<int64_t>() > kMaxMultipleOf) {
            fail(here, fmt::format("'multipleOf' is supported for type integer with an integer "
                                   "in [1, {}] only",
                                   kMaxMultipleOf));
        }
    }

    // Where the grammar reads one keyword of a pair and skips the other.
    void check_combinations(const json& schema, const std::string& pointer) {
        const auto has = [&](const char* key) { return schema.contains(key); };
        const auto constraining = [&](const json& object, auto allowed) {
            for (const auto& [key, value] : object.items()) {
                if (one_of(kAnnotations, key) || key == "$id" || key == "$defs" ||
                    key == "definitions" || allowed(key)) {
                    continue;
                }
                return std::optional<std::string>(key);
            }
            return std::optional<std::string>();
        };
        const auto beside = [&](const char* anchor, auto allowed) {
            if (!has(anchor)) return false;
            if (auto other = constraining(schema, allowed)) {
                fail(pointer + "/" + escape_pointer_token(*other),
                     fmt::format("'{}' beside '{}' is not supported (the grammar would enforce "
                                 "only '{}')",
                                 *other, anchor, anchor));
                return true;
            }
            return false;
        };
        const auto only = [](std::string_view name) {
            return [name](const std::string& key) { return key == name; };
        };
        const auto type_only = [](const std::string& key) { return key == "type"; };
        if (beside("$ref", only("$ref"))) return;
        if (beside("const",
                   [&](const std::string& key) { return key == "const" || type_only(key); }))
            return;
        if (beside("enum", [&](const std::string& key) { return key == "enum" || type_only(key); }))
            return;
        for (const char* combinator : {"anyOf", "oneOf", "allOf"}) {
            if (beside(combinator, only(combinator))) return;
        }
        if (has("pattern") && has("format")) {
            return fail(pointer + "/pattern", "'pattern' beside 'format' is not supported");
        }
        for (const char* length : {"minLength", "maxLength"}) {
            if (has(length) && (has("pattern") || has("format"))) {
                return fail(pointer + "/" + length,
                            fmt::format("'{}' beside '{}' is not supported", length,
                                        has("pattern") ? "pattern" : "format"));
            }
        }
    }
};

}  // namespace

std::optional<SchemaProblem> check_json_schema(const json& schema) {
    SchemaChecker checker;
    checker.check(schema, "", 0, true);
    return checker.problem;
}

}  // namespace ladder::server
