#include "ladder/server/structured_output.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "ladder/server/api_error.h"
#include "ladder/server/request_fields.h"
#include "ladder/server/json_schema_check.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;
using Kind = engine::GrammarSpec::Kind;

// JSON with the whitespace the model likes between tokens, as vLLM and
// xgrammar default to; structured_outputs.disable_any_whitespace asks for the
// compact form.
constexpr bool kDefaultAnyWhitespace = true;

using Pointer = json::json_pointer;

// The schema at `where` in the body, checked; compiled in its written order.
OutputGrammar schema_grammar(const SchemaSource& source, const Pointer& where,
                             const std::string& param) {
    require_supported_schema(source.body()[where], param);
    return output_grammar(Kind::JsonSchema, source.at(where).dump(), param, kDefaultAnyWhitespace);
}

OutputGrammar json_object_grammar(const std::string& param) {
    return output_grammar(Kind::JsonObject, "", param, kDefaultAnyWhitespace);
}

std::optional<OutputGrammar> parse_response_format(const SchemaSource& source) {
    const json& format = source.body()["response_format"];
    if (!format.is_object())
        invalid_param("response_format", "'response_format' must be an object");
    const json* type = non_null_field(format, "type");
    if (type == nullptr || !type->is_string()) {
        invalid_param(
            "response_format.type",
            "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\"");
    }
    const std::string& name = type->get_ref<const std::string&>();
    if (name == "text") return std::nullopt;
    if (name == "json_object") {
        // llama.cpp's form: a schema beside json_object.
        if (non_null_field(format, "schema") != nullptr) {
            return schema_grammar(source, Pointer("/response_format/schema"),
                                  "response_format.schema");
        }
        return json_object_grammar("response_format");
    }
    if (name != "json_schema") {
        invalid_param("response_format.type",
                      fmt::format("unsupported response_format type \"{}\": use \"text\", "
                                  "\"json_object\" or \"json_schema\"",
                                  name));
    }
    const json* spec = non_null_field(format, "json_schema");
    if (spec == nullptr || !spec->is_object()) {
        invalid_param("response_format.json_schema",
                      "'response_format.json_schema' must be an object holding the schema");
    }
    if (const json* strict = non_null_field(*spec, "strict"); strict && !strict->is_boolean()) {
        invalid_param("response_format.json_schema.strict", "'strict' must be true or false");
    }
    if (const json* title = non_null_field(*spec, "name"); title && !title->is_string()) {
        invalid_param("response_format.json_schema.name", "'name' must be a string");
    }
    // The schema is enforced whether strict or not; without one, any object.
    if (non_null_field(*spec, "schema") == nullptr)
        return json_object_grammar("response_format.json_schema");
    return schema_grammar(source, Pointer("/response_format/json_schema/schema"),
                          "response_format.json_schema.schema");
}

constexpr std::array<std::string_view, 9> kStructuredOutputKeys = {"json",
                                                                   "regex",
                                                                   "choice",
                                                                   "grammar",
                                                                   "json_object",
                                                                   "structural_tag",
                                                                   "disable_any_whitespace",
                                                                   "disable_additional_properties",
                                                                   "whitespace_pattern"};

OutputGrammar parse_structured_outputs(const SchemaSource& source) {
    const json& outputs = source.body()["structured_outputs"];
    const std::string base = "structured_outputs";
    if (!outputs.is_object()) invalid_param(base, "'structured_outputs' must be an object");
    for (const auto& [key, value] : outputs.items()) {
        if (std::find(kStructuredOutputKeys.begin(), kStructuredOutputKeys.end(), key) ==
            kStructuredOutputKeys.end()) {
            invalid_param(base + "." + key,
                          fmt::format("unknown field 'structured_outputs.{}'", key));
        }
    }
    if (non_null_field(outputs, "whitespace_pattern") != nullptr) {
        invalid_param(base + ".whitespace_pattern",
                      "'structured_outputs.whitespace_pattern' is not supported: use "
                      "disable_any_whitespace for compact JSON");
    }
    bool any_whitespace = kDefaultAnyWhitespace;
    if (const json* flag = non_null_field(outputs, "disable_any_whitespace")) {
        if (!flag->is_boolean())
            invalid_param(base + ".disable_any_whitespace", "must be true or false");
        any_whitespace = !flag->get<bool>();
    }
    // The grammar never writes properties a schema does not name, so
    // disable_additional_properties holds either way; it is only checked.
    if (const json* flag = non_null_field(outputs, "disable_additional_properties");
        flag && !flag->is_boolean()) {
        invalid_param(base + ".disable_additional_properties", "must be true or false");
    }

    // Exactly one constraint, as vLLM asks.
    const char* chosen = nullptr;
    for (const char* key :
         {"json", "regex", "choice", "grammar", "json_object", "structural_tag"}) {
        if (non_null_field(outputs, key) == nullptr) continue;
        if (chosen != nullptr) {
            invalid_param(
                base + "." + key,
                fmt::format("'structured_outputs' holds both '{}' and '{}': use one", chosen, key));
        }
        chosen = key;
    }
    if (chosen == nullptr) {
        invalid_param(base,
                      "'structured_outputs' names no constraint: give one of json, regex, "
                      "choice, grammar, json_object, structural_tag");
    }
    const std::string key = chosen;
    const std::string param = base + "." + key;
    const json& value = outputs[key];
    OutputGrammar grammar;
    grammar.param = param;
    if (key == "json" && value.is_string()) {
        // The schema as JSON text: its own order is the written one.
        const json schema = json::parse(value.get<std::string>(), nullptr, false);
        if (schema.is_discarded()) invalid_param(param, "'structured_outputs.json' is not JSON");
        const nlohmann::ordered_json written =
            nlohmann::ordered_json::parse(value.get<std::string>());
        grammar = schema_grammar(SchemaSource(schema, &written), Pointer(), param);
    } else if (key == "json") {
        grammar = schema_grammar(source, Pointer("/structured_outputs/json"), param);
    } else if (key == "json_object") {
        if (!value.is_boolean() || !value.get<bool>()) {
            invalid_param(param, "'structured_outputs.json_object' must be true");
        }
        grammar = json_object_grammar(param);
    } else if (key == "choice") {
        if (!value.is_array() || value.empty()) {
            invalid_param(param, "'structured_outputs.choice' must be a non-empty list of strings");
        }
        std::vector<std::string> choices;
        for (const json& item : value) {
            if (!item.is_string())
                invalid_param(param, "'structured_outputs.choice' must hold strings only");
            choices.push_back(item.get<std::string>());
        }
        grammar = output_grammar(Kind::Ebnf, choice_grammar(choices), param);
    } else if (key == "structural_tag") {
        if (!value.is_string() && !value.is_object())
            invalid_param(param, "'structured_outputs.structural_tag' must be a JSON string");
        grammar =
            output_grammar(Kind::StructuralTag,
                           value.is_string() ? value.get<std::string>() : value.dump(), param);
    } else {
        if (!value.is_string()) invalid_param(param, fmt::format("'{}' must be a string", param));
        const std::string& text = value.get_ref<const std::string&>();
        // EBNF/GBNF rules are written `name ::= ...`; Lark's `name: ...`.
        const Kind grammar_kind = text.find("::=") != std::string::npos ? Kind::Ebnf : Kind::Lark;
        grammar = output_grammar(key == "regex" ? Kind::Regex : grammar_kind, text, param);
    }
    grammar.spec.any_whitespace = any_whitespace;
    return grammar;
}

}  // namespace

OutputGrammar output_grammar(Kind kind, std::string source, std::string param,
                             bool any_whitespace) {
    OutputGrammar grammar;
    grammar.spec.kind = kind;
    grammar.spec.source = std::move(source);
    grammar.spec.any_whitespace = any_whitespace;
    grammar.param = std::move(param);
    return grammar;
}

void require_supported_schema(const json& schema, const std::string& param) {
    if (auto problem = check_json_schema(schema)) {
        const std::string where =
            problem->pointer.empty() ? "" : fmt::format(" at {}", problem->pointer);
        invalid_param(param, fmt::format("'{}': {}{}", param, problem->message, where));
    }
}

nlohmann::ordered_json SchemaSource::at(const json::json_pointer& pointer) const {
    if (written_ != nullptr && written_->contains(pointer)) return (*written_)[pointer];
    return nlohmann::ordered_json::parse(body_[pointer].dump());
}

// vLLM's fields before structured_outputs (removed in v0.12): refused by
// name, never ignored, since each would change the output.
constexpr std::array<const char*, 6> kRetiredGuidedFields = {
    "guided_json",    "guided_regex",       "guided_choice",
    "guided_grammar", "guided_json_object", "guided_whitespace_pattern"};

std::optional<OutputGrammar> parse_output_grammar(const SchemaSource& source) {
    const json& body = source.body();
    for (const char* retired : kRetiredGuidedFields) {
        if (non_null_field(body, retired) != nullptr) {
            invalid_param(std::string(retired),
                          fmt::format("'{}' is not supported: use 'structured_outputs' "
                                      "(vLLM's field since v0.12) or 'response_format'",
                                      retired));
        }
    }
    // One field at most may constrain; response_format "text" does not.
    const char* chosen = nullptr;
    for (const char* name : {"response_format", "structured_outputs", "json_schema", "grammar"}) {
        const json* value = non_null_field(body, name);
        if (value == nullptr) continue;
        if (std::string_view(name) == "response_format" && value->is_object() &&
            value->value("type", "") == "text") {
            continue;
        }
        if (chosen != nullptr) {
            invalid_param(name, fmt::format("'{}' and '{}' both constrain the output: use one",
                                            chosen, name));
        }
        chosen = name;
    }
    if (chosen == nullptr) return std::nullopt;
    const std::string name = chosen;
    const json& value = body[name];
    if (name == "response_format") return parse_response_format(source);
    if (name == "structured_outputs") return parse_structured_outputs(source);
    if (name == "json_schema")
        return schema_grammar(source, Pointer("/json_schema"), "json_schema");
    if (!value.is_string()) invalid_param("grammar", "'grammar' must be a string (GBNF)");
    return output_grammar(Kind::Ebnf, value.get<std::string>(), "grammar", kDefaultAnyWhitespace);
}

std::function<std::unique_ptr<engine::TokenConstraint>()> compile_output_grammar(
    const OutputGrammar& grammar, const engine::GrammarCompiler& compiler,
    const std::string& gate) {
    std::shared_ptr<const engine::CompiledGrammar> compiled;
    try {
        compiled = compiler.compile(grammar.spec);
    } catch (const engine::GrammarError& error) {
        using ErrorKind = engine::GrammarError::Kind;
        const char* what = error.kind() == ErrorKind::Invalid    ? "is not valid"
                           : error.kind() == ErrorKind::TooLarge ? "is too large"
                                                                 : "is too slow to compile";
        invalid_param(grammar.param, fmt::format("'{}' {}: {}", grammar.param, what, error.what()));
    }
    return [compiled, gate] { return engine::GrammarCompiler::make_constraint(compiled, gate); };
}

std::string ebnf_literal(const std::string& text) {
    std::string out = "\"";
    for (const unsigned char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    out += fmt::format("\\x{:02x}", c);
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string choice_grammar(const std::vector<std::string>& choices) {
    std::string grammar = "root ::= ";
    for (size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) grammar += " | ";
        grammar += choices[i].empty() ? "\"\"" : ebnf_literal(choices[i]);
    }
    return grammar + "\n";
}

}  // namespace ladder::server
