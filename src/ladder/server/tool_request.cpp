#include "ladder/server/tool_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "ladder/server/api_error.h"
#include "ladder/server/request_fields.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;  // what the grammar reads keeps the written order
using Kind = engine::GrammarSpec::Kind;

constexpr size_t kMaxTools = 128;
constexpr size_t kMaxNameBytes = 64;

// OpenAI's rule for function names: letters, digits, '_' and '-', up to 64.
bool valid_function_name(const std::string& name) {
    return !name.empty() && name.size() <= kMaxNameBytes &&
           std::all_of(name.begin(), name.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
           });
}

ToolFunction parse_tool(const SchemaSource& source, size_t index) {
    const json& tool = source.body()["tools"][index];
    const std::string param = fmt::format("tools[{}]", index);
    // Compared as JSON: `value("type", "")` throws when the type is not a string.
    if (!tool.is_object() || !tool.contains("type") || tool["type"] != "function") {
        invalid_param(param, fmt::format("'{}' must be {{\"type\": \"function\", \"function\": "
                                         "{{...}}}}",
                                         param));
    }
    const json* function = non_null_field(tool, "function");
    if (function == nullptr || !function->is_object()) {
        invalid_param(param + ".function", fmt::format("'{}.function' must be an object", param));
    }
    const json* name = non_null_field(*function, "name");
    if (name == nullptr || !name->is_string() || !valid_function_name(name->get<std::string>())) {
        invalid_param(
            param + ".function.name",
            fmt::format("'{}.function.name' must be 1 to 64 letters, digits, '_' or '-'", param));
    }
    if (const json* description = non_null_field(*function, "description");
        description && !description->is_string()) {
        invalid_param(param + ".function.description", "'description' must be a string");
    }
    if (const json* strict = non_null_field(*function, "strict"); strict && !strict->is_boolean()) {
        invalid_param(param + ".function.strict", "'strict' must be true or false");
    }
    ToolFunction parsed;
    parsed.name = name->get<std::string>();
    // A function without parameters takes none: {}.
    parsed.parameters = {{"type", "object"}, {"properties", ojson::object()}};
    if (const json* parameters = non_null_field(*function, "parameters")) {
        const std::string schema_param = param + ".function.parameters";
        if (!parameters->is_object())
            invalid_param(schema_param, "'parameters' must be a JSON Schema object");
        require_supported_schema(*parameters, schema_param);
        parsed.parameters =
            source.at(json::json_pointer(fmt::format("/tools/{}/function/parameters", index)));
    }
    return parsed;
}

void parse_tool_choice(const json& body, ToolRequest& request) {
    const json* choice = non_null_field(body, "tool_choice");
    if (choice == nullptr) return;  // auto
    if (choice->is_string()) {
        const std::string& name = choice->get_ref<const std::string&>();
        if (name == "none") {
            request.choice = ToolChoice::None;
        } else if (name == "auto") {
            request.choice = ToolChoice::Auto;
        } else if (name == "required") {
            request.choice = ToolChoice::Required;
        } else {
            invalid_param("tool_choice", fmt::format("'tool_choice' must be \"none\", \"auto\", "
                                                     "\"required\" or a named function (got "
                                                     "\"{}\")",
                                                     name));
        }
        return;
    }
    const json* function = choice->is_object() ? non_null_field(*choice, "function") : nullptr;
    const json* name =
        function != nullptr && function->is_object() ? non_null_field(*function, "name") : nullptr;
    if (choice->value("type", "") != "function" || name == nullptr || !name->is_string()) {
        invalid_param("tool_choice",
                      "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                      "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    request.choice = ToolChoice::Function;
    request.function = name->get<std::string>();
    const bool known =
        std::any_of(request.functions.begin(), request.functions.end(),
                    [&](const ToolFunction& f) { return f.name == request.function; });
    if (!known) {
        invalid_param("tool_choice",
                      fmt::format("'tool_choice' names the function '{}', which is not in 'tools'",
                                  request.function));
    }
}

// A structural tag's JSON Schema element, its whitespace bounded as the
// compiler bounds a schema's.
ojson json_schema_format(ojson schema) {
    return {{"type", "json_schema"},
            {"json_schema", std::move(schema)},
            {"max_whitespace_cnt", engine::kMaxJsonWhitespaceRun}};
}

// One call of one function, in the format's words: what opens it (up to
// where the arguments begin), its arguments, what closes it.
ojson call_tag(const ToolFunction& function, ToolCallFormat format, std::string_view opening) {
    const std::string arguments_key =
        format == ToolCallFormat::Llama3Json ? "parameters" : "arguments";
    ojson tag = {{"type", "tag"},
                {"begin", fmt::format("{}{{\"name\": \"{}\", \"{}\": ", opening, function.name,
                                      arguments_key)},
                {"content", json_schema_format(function.parameters)},
                {"end", "}"}};
    if (format == ToolCallFormat::Hermes) tag["end"] = "}\n</tool_call>";
    return tag;
}

ojson call_tags(const ToolRequest& request, ToolCallFormat format, std::string_view opening) {
    ojson tags = ojson::array();
    for (const ToolFunction& function : request.functions) {
        if (request.choice == ToolChoice::Function && function.name != request.function) continue;
        tags.push_back(call_tag(function, format, opening));
    }
    return tags;
}

// Calls and nothing else: at least one, more when parallel calls are allowed.
ojson forced_calls(const ToolRequest& request, ToolCallFormat format) {
    const bool one = !request.parallel || request.choice == ToolChoice::Function;
    const auto separated = [&](std::string_view opening, const char* separator) {
        return ojson{{"type", "tags_with_separator"},
                    {"tags", call_tags(request, format, opening)},
                    {"separator", separator},
                    {"at_least_one", true},
                    {"stop_after_first", one}};
    };
    switch (format) {
        case ToolCallFormat::Hermes:
            return separated("<tool_call>\n", "\n");
        case ToolCallFormat::Llama3Json:
            return separated("", "; ");
        case ToolCallFormat::Mistral:
            return {
                {"type", "sequence"},
                {"elements", ojson::array({{{"type", "const_string"}, {"value", "[TOOL_CALLS]["}},
                                          separated("", ", "),
                                          {{"type", "const_string"}, {"value", "]"}}})}};
    }
    return nullptr;
}

// Free text, until the model writes the format's marker: then a call.
ojson triggered_calls(const ToolRequest& request, ToolCallFormat format) {
    ojson tags;
    ojson triggers;
    switch (format) {
        case ToolCallFormat::Hermes:
            tags = call_tags(request, format, "<tool_call>\n");
            triggers = {"<tool_call>"};
            break;
        case ToolCallFormat::Llama3Json:
            tags = call_tags(request, format, "");
            for (ojson& tag : call_tags(request, format, "<|python_tag|>")) tags.push_back(tag);
            triggers = {"{\"name\": ", "<|python_tag|>"};
            break;
        case ToolCallFormat::Mistral: {
            ojson list = forced_calls(request, format)["elements"][1];
            tags = ojson::array({{{"type", "tag"},
                                 {"begin", "[TOOL_CALLS]["},
                                 {"content", std::move(list)},
                                 {"end", "]"}}});
            triggers = {"[TOOL_CALLS]"};
            break;
        }
    }
    return {{"type", "triggered_tags"},
            {"triggers", std::move(triggers)},
            {"tags", std::move(tags)},
            {"at_least_one", false},
            {"stop_after_first", !request.parallel || format == ToolCallFormat::Mistral}};
}

}  // namespace

std::optional<ToolRequest> parse_tool_request(const SchemaSource& source) {
    const json& body = source.body();
    const json* tools = non_null_field(body, "tools");
    if (tools == nullptr || (tools->is_array() && tools->empty())) {
        if (non_null_field(body, "tool_choice") != nullptr) {
            const json& choice = body["tool_choice"];
            if (!(choice.is_string() && choice == "none")) {
                invalid_param("tool_choice", "'tool_choice' needs 'tools'");
            }
        }
        return std::nullopt;
    }
    if (!tools->is_array() || tools->size() > kMaxTools) {
        invalid_param("tools",
                      fmt::format("'tools' must be a list of at most {} tools", kMaxTools));
    }
    ToolRequest request;
    request.tools = source.at(json::json_pointer("/tools"));
    for (size_t i = 0; i < tools->size(); ++i) {
        ToolFunction function = parse_tool(source, i);
        for (const ToolFunction& earlier : request.functions) {
            if (earlier.name == function.name) {
                invalid_param(fmt::format("tools[{}].function.name", i),
                              fmt::format("two tools are named '{}'", function.name));
            }
        }
        request.functions.push_back(std::move(function));
    }
    parse_tool_choice(body, request);
    if (const json* parallel = non_null_field(body, "parallel_tool_calls")) {
        if (!parallel->is_boolean())
            invalid_param("parallel_tool_calls", "'parallel_tool_calls' must be true or false");
        request.parallel = parallel->get<bool>();
    }
    return request;
}

std::optional<OutputGrammar> tool_call_grammar(const ToolRequest& request, ToolCallFormat format,
                                               const std::optional<OutputGrammar>& answer) {
    if (request.choice == ToolChoice::None) return answer;
    ojson root;
    if (request.choice == ToolChoice::Auto) {
        root = triggered_calls(request, format);
        if (answer) {
            // Calls, or an answer in the asked-for shape.
            ojson answer_format;
            if (answer->spec.kind == Kind::JsonSchema) {
                answer_format = json_schema_format(ojson::parse(answer->spec.source));
            } else if (answer->spec.kind == Kind::JsonObject) {
                answer_format =
                    json_schema_format({{"type", "object"}, {"additionalProperties", true}});
            } else {
                invalid_param(answer->param,
                              fmt::format("'{}' together with tools needs tool_choice \"none\" or "
                                          "\"required\" (only a JSON answer can stand beside "
                                          "calls)",
                                          answer->param));
            }
            root = {{"type", "or"},
                    {"elements",
                     ojson::array({std::move(answer_format), forced_calls(request, format)})}};
        }
    } else {
        // A forced call: a text answer cannot come.
        root = forced_calls(request, format);
    }
    const ojson tag = {{"type", "structural_tag"}, {"format", std::move(root)}};
    return output_grammar(Kind::StructuralTag, tag.dump(), "tools");
}

}  // namespace ladder::server
