// The request fields that hold the output to a grammar, mapped onto the
// grammar engine: OpenAI's response_format (text, json_object, json_schema),
// vLLM's structured_outputs (its names since v0.12: json, regex, choice,
// grammar, json_object, structural_tag), and llama.cpp's json_schema and
// grammar (GBNF). Both endpoints read them.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ladder/engine/grammar_compiler.h"
#include "ladder/engine/token_constraint.h"

namespace ladder::server {

struct OutputGrammar {
    engine::GrammarSpec spec;
    std::string param;  // the field it came from, named in errors
};

OutputGrammar output_grammar(engine::GrammarSpec::Kind kind, std::string source, std::string param,
                             bool any_whitespace = true);

// A request's schemas, in the order the client wrote their keys: the parsed
// body (nlohmann::json sorts keys) is checked, but a schema is compiled, and
// its properties generated, in the written order (a model answers better
// with "reasoning" before "answer" when the schema says so). Without the
// written body, the parsed one's order.
class SchemaSource {
public:
    explicit SchemaSource(const nlohmann::json& body, const nlohmann::ordered_json* written = nullptr)
        : body_(body), written_(written) {}
    const nlohmann::json& body() const { return body_; }
    // The value at pointer, keys in the written order.
    nlohmann::ordered_json at(const nlohmann::json::json_pointer& pointer) const;

private:
    const nlohmann::json& body_;
    const nlohmann::ordered_json* written_;
};

// Nothing when the output is free text. Throws ApiError 400 naming the field
// for a malformed one, a schema keyword that would not be enforced, or a
// second field that constrains too.
std::optional<OutputGrammar> parse_output_grammar(const SchemaSource& source);

// The JSON Schema of a request field, checked: ApiError 400 naming param and
// the keyword's place for one that would not be enforced.
void require_supported_schema(const nlohmann::json& schema, const std::string& param);

// Compiles the grammar (ApiError 400 naming its field when it is invalid, too
// large or too slow to compile) and returns what builds each choice's matcher.
// gate: text after which the grammar holds (a reasoning model's "</think>").
std::function<std::unique_ptr<engine::TokenConstraint>()> compile_output_grammar(
    const OutputGrammar& grammar, const engine::GrammarCompiler& compiler,
    const std::string& gate = {});

// `root ::= "a" | "b" ...`: exactly one of the strings.
std::string choice_grammar(const std::vector<std::string>& choices);
// A string as an EBNF literal, quoted and escaped.
std::string ebnf_literal(const std::string& text);

}  // namespace ladder::server
