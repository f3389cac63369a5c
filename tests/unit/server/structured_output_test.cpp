// The structured-output fields mapped onto grammars, the JSON Schema
// keywords checked before compiling, and every bad field a 400 naming it.
#include "ladder/server/structured_output.h"

#include <gtest/gtest.h>

#include "ladder/server/api_error.h"
#include "ladder/server/json_schema_check.h"
#include "ladder/server/tool_request.h"

namespace ladder::server {
namespace structured_output_test {

using json = nlohmann::json;
using Kind = engine::GrammarSpec::Kind;

std::optional<OutputGrammar> grammar_of(const json& body) {
    return parse_output_grammar(SchemaSource(body));
}
std::optional<ToolRequest> tools_of(const json& body) {
    return parse_tool_request(SchemaSource(body));
}

std::string rejected_param(const json& body) {
    try {
        grammar_of(body);
    } catch (const ApiError& error) {
        EXPECT_EQ(error.status(), 400);
        return error.param();
    }
    ADD_FAILURE() << "accepted: " << body.dump();
    return "";
}

TEST(JsonSchemaCheck, AcceptsWhatTheGrammarEnforces) {
    const json pydantic = json::parse(R"({
        "$defs": {"Color": {"enum": ["red", "green"], "title": "Color", "type": "string"},
                  "Node": {"type": "object", "properties": {"next": {"anyOf": [
                      {"$ref": "#/$defs/Node"}, {"type": "null"}], "default": null}},
                      "required": ["next"], "additionalProperties": false}},
        "properties": {
            "name": {"title": "Name", "type": "string", "minLength": 1, "maxLength": 20},
            "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
            "score": {"type": "number", "minimum": -1.5},
            "color": {"$ref": "#/$defs/Color", "description": "favourite"},
            "when": {"type": "string", "format": "date-time"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}]},
            "node": {"$ref": "#/$defs/Node"},
            "kind": {"const": "person"},
            "either": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "even": {"type": "integer", "multipleOf": 2},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}}
        },
        "required": ["name", "age"], "title": "Person", "type": "object"
    })");
    EXPECT_EQ(check_json_schema(pydantic), std::nullopt);
    EXPECT_EQ(check_json_schema(true), std::nullopt);
}

TEST(JsonSchemaCheck, NamesTheKeywordItWouldNotEnforceAndWhere) {
    const auto problem = [](const char* text) {
        const auto found = check_json_schema(json::parse(text));
        return found ? found->pointer + " " + found->message : std::string("none");
    };
    EXPECT_EQ(problem(R"({"type": "object", "properties": {"a": {"not": {"type": "null"}}}})"),
              "/properties/a/not the keyword 'not' is not supported");
    EXPECT_EQ(problem(R"({"type": "array", "uniqueItems": true})"),
              "/uniqueItems the keyword 'uniqueItems' is not supported");
    EXPECT_NE(problem(R"({"if": {}, "then": {}})").find("'if'"), std::string::npos);
    EXPECT_NE(problem(R"({"type": "string", "format": "ipv5"})").find("/format the format"),
              std::string::npos);
    EXPECT_NE(problem(R"({"type": "number", "multipleOf": 0.5})").find("'multipleOf'"),
              std::string::npos);
    EXPECT_NE(problem(R"({"$ref": "#/$defs/A", "minLength": 2, "$defs": {"A": {}}})")
                  .find("'minLength' beside '$ref'"),
              std::string::npos);
    EXPECT_NE(problem(R"({"type": "object", "anyOf": [{}, {}], "properties": {}})")
                  .find("beside 'anyOf'"),
              std::string::npos);
    EXPECT_NE(problem(R"({"type": "string", "pattern": "a+", "maxLength": 3})")
                  .find("'maxLength' beside 'pattern'"),
              std::string::npos);
    EXPECT_NE(problem(R"({"x-custom": 1})").find("'x-custom'"), std::string::npos);
    EXPECT_NE(problem(R"({"$ref": "other.json#/a"})").find("'$ref'"), std::string::npos);
    EXPECT_NE(problem(R"({"type": "strin"})").find("'type'"), std::string::npos);
    EXPECT_NE(problem(R"({"items": [{}]})").find("prefixItems"), std::string::npos);
}

TEST(StructuredOutput, ReadsOpenAIsResponseFormat) {
    EXPECT_FALSE(grammar_of({{"response_format", {{"type", "text"}}}}).has_value());
    auto grammar = grammar_of({{"response_format", {{"type", "json_object"}}}});
    ASSERT_TRUE(grammar.has_value());
    EXPECT_EQ(grammar->spec.kind, Kind::JsonObject);
    const json schema = {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}};
    grammar =
        grammar_of({{"response_format",
                     {{"type", "json_schema"},
                      {"json_schema", {{"name", "A"}, {"strict", true}, {"schema", schema}}}}}});
    ASSERT_TRUE(grammar.has_value());
    EXPECT_EQ(grammar->spec.kind, Kind::JsonSchema);
    EXPECT_EQ(json::parse(grammar->spec.source), schema);
    EXPECT_EQ(grammar->param, "response_format.json_schema.schema");
}

TEST(StructuredOutput, ReadsVllmsStructuredOutputsAndLlamaCppsFields) {
    auto grammar = grammar_of({{"structured_outputs", {{"regex", "[0-9]+"}}}});
    ASSERT_TRUE(grammar.has_value());
    EXPECT_EQ(grammar->spec.kind, Kind::Regex);
    EXPECT_EQ(grammar->spec.source, "[0-9]+");
    grammar = grammar_of({{"structured_outputs", {{"choice", {"yes", "no \"way\""}}}}});
    ASSERT_TRUE(grammar.has_value());
    EXPECT_EQ(grammar->spec.kind, Kind::Ebnf);
    EXPECT_EQ(grammar->spec.source, "root ::= \"yes\" | \"no \\\"way\\\"\"\n");
    grammar = grammar_of({{"structured_outputs", {{"grammar", "start: \"a\"+"}}}});
    EXPECT_EQ(grammar->spec.kind, Kind::Lark);
    grammar =
        grammar_of({{"structured_outputs",
                     {{"json", R"({"type": "integer"})"}, {"disable_any_whitespace", true}}}});
    EXPECT_EQ(grammar->spec.kind, Kind::JsonSchema);
    EXPECT_FALSE(grammar->spec.any_whitespace);
    grammar = grammar_of({{"grammar", "root ::= \"x\""}});
    EXPECT_EQ(grammar->spec.kind, Kind::Ebnf);
    EXPECT_EQ(grammar->param, "grammar");
    grammar = grammar_of({{"json_schema", {{"type", "boolean"}}}});
    EXPECT_EQ(grammar->spec.kind, Kind::JsonSchema);
    grammar = grammar_of(
        {{"response_format", {{"type", "json_object"}, {"schema", {{"type", "string"}}}}}});
    EXPECT_EQ(grammar->spec.kind, Kind::JsonSchema);
}

TEST(StructuredOutput, CompilesSchemasInTheOrderTheirKeysWereWritten) {
    const std::string text =
        R"({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object",
            "properties": {"reasoning": {"type": "string"}, "answer": {"type": "integer"}}}}},
            "tools": [{"type": "function", "function": {"name": "f", "parameters":
            {"type": "object", "properties": {"zeta": {}, "alpha": {}}}}}]})";
    const json body = json::parse(text);
    const nlohmann::ordered_json written = nlohmann::ordered_json::parse(text);
    const auto grammar = parse_output_grammar(SchemaSource(body, &written));
    ASSERT_TRUE(grammar.has_value());
    EXPECT_LT(grammar->spec.source.find("reasoning"), grammar->spec.source.find("answer"));
    const auto tools = parse_tool_request(SchemaSource(body, &written));
    const std::string parameters = tools->functions[0].parameters.dump();
    EXPECT_LT(parameters.find("zeta"), parameters.find("alpha"));
    // Without the written body, the parsed one's (sorted) order.
    const auto sorted = parse_output_grammar(SchemaSource(body));
    EXPECT_GT(sorted->spec.source.find("reasoning"), sorted->spec.source.find("answer"));
}

TEST(StructuredOutput, RefusesWhatItCannotHonourNamingTheField) {
    EXPECT_EQ(rejected_param({{"response_format", {{"type", "yaml"}}}}), "response_format.type");
    EXPECT_EQ(rejected_param({{"response_format", {{"type", "json_schema"}}}}),
              "response_format.json_schema");
    EXPECT_EQ(
        rejected_param({{"response_format",
                         {{"type", "json_schema"},
                          {"json_schema", {{"schema", {{"type", "array"}, {"contains", {}}}}}}}}}),
        "response_format.json_schema.schema");
    EXPECT_EQ(rejected_param({{"structured_outputs", {{"regex", "a"}, {"choice", {"a"}}}}}),
              "structured_outputs.choice");
    EXPECT_EQ(
        rejected_param({{"structured_outputs", {{"whitespace_pattern", " *"}, {"regex", "a"}}}}),
        "structured_outputs.whitespace_pattern");
    EXPECT_EQ(rejected_param({{"structured_outputs", {{"regexp", "a"}}}}),
              "structured_outputs.regexp");
    EXPECT_EQ(rejected_param({{"structured_outputs", json::object()}}), "structured_outputs");
    EXPECT_EQ(rejected_param({{"structured_outputs", {{"choice", json::array()}}}}),
              "structured_outputs.choice");
    EXPECT_EQ(rejected_param(
                  {{"response_format", {{"type", "json_object"}}}, {"grammar", "root ::= \"a\""}}),
              "grammar");
    EXPECT_EQ(rejected_param({{"grammar", 3}}), "grammar");
    EXPECT_EQ(rejected_param({{"guided_json", {{"type", "object"}}}}), "guided_json");
    EXPECT_EQ(rejected_param({{"guided_choice", {"a", "b"}}}), "guided_choice");
}

TEST(ToolRequest, ReadsToolsAndChoice) {
    const json tools = json::parse(R"([
        {"type": "function", "function": {"name": "get_weather", "description": "d",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                        "required": ["city"]}}},
        {"type": "function", "function": {"name": "now"}}])");
    auto request = tools_of({{"tools", tools}});
    ASSERT_TRUE(request.has_value());
    EXPECT_EQ(request->choice, ToolChoice::Auto);
    ASSERT_EQ(request->functions.size(), 2u);
    EXPECT_EQ(request->functions[1].parameters["properties"], json::object());
    request = tools_of({{"tools", tools},
                        {"tool_choice", {{"type", "function"}, {"function", {{"name", "now"}}}}},
                        {"parallel_tool_calls", false}});
    EXPECT_EQ(request->choice, ToolChoice::Function);
    EXPECT_EQ(request->function, "now");
    EXPECT_FALSE(request->parallel);
    // Every format's grammar is a structural tag the compiler takes.
    for (ToolCallFormat format :
         {ToolCallFormat::Hermes, ToolCallFormat::Llama3Json, ToolCallFormat::Mistral}) {
        for (const char* choice : {"auto", "required"}) {
            auto parsed = tools_of({{"tools", tools}, {"tool_choice", choice}});
            const auto grammar = tool_call_grammar(*parsed, format, std::nullopt);
            ASSERT_TRUE(grammar.has_value());
            EXPECT_EQ(grammar->spec.kind, Kind::StructuralTag);
            EXPECT_EQ(json::parse(grammar->spec.source)["type"], "structural_tag");
        }
    }
    EXPECT_FALSE(tool_call_grammar(*tools_of({{"tools", tools}, {"tool_choice", "none"}}),
                                   ToolCallFormat::Hermes, std::nullopt)
                     .has_value());
}

TEST(ToolRequest, RefusesBadToolsNamingTheField) {
    const auto rejected = [](const json& body) {
        try {
            tools_of(body);
        } catch (const ApiError& error) {
            return error.param();
        }
        return std::string("accepted");
    };
    const json tool = {{"type", "function"}, {"function", {{"name", "f"}}}};
    EXPECT_EQ(rejected({{"tools", {tool}},
                        {"tool_choice", {{"type", "function"}, {"function", {{"name", "g"}}}}}}),
              "tool_choice");
    EXPECT_EQ(rejected({{"tools", {tool}}, {"tool_choice", "sometimes"}}), "tool_choice");
    EXPECT_EQ(rejected({{"tool_choice", "required"}}), "tool_choice");
    EXPECT_EQ(rejected({{"tools", {{{"type", "function"}, {"function", {{"name", "a b"}}}}}}}),
              "tools[0].function.name");
    EXPECT_EQ(rejected({{"tools", {tool, tool}}}), "tools[1].function.name");
    EXPECT_EQ(rejected({{"tools",
                         {{{"type", "function"},
                           {"function", {{"name", "f"}, {"parameters", {{"not", {}}}}}}}}}}),
              "tools[0].function.parameters");
    EXPECT_EQ(rejected({{"tools", {tool}}, {"parallel_tool_calls", "yes"}}), "parallel_tool_calls");
    EXPECT_EQ(rejected({{"tools", {{{"type", "retrieval"}}}}}), "tools[0]");
}

}  // namespace structured_output_test
}  // namespace ladder::server
