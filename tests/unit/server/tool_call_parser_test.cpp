// The tool-call parsers on canned model outputs of each format: text around
// and between calls, several calls, malformed and cut-off ones; and that the
// output read a character at a time gives exactly what it gives read whole.
#include "ladder/server/tool_call_parser.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "../tokenizer/jinja_test_support.h"
#include "ladder/server/chat_output.h"
#include "ladder/server/reasoning_parser.h"
#include "ladder/tokenizer/chat_template.h"

namespace ladder::server {
namespace {

struct Call {
    std::string name;
    std::string arguments;
    bool operator==(const Call&) const = default;
};

struct Parsed {
    std::string content;
    std::vector<Call> calls;
    std::vector<std::string> ids;
};

std::ostream& operator<<(std::ostream& os, const Call& call) {
    return os << call.name << "(" << call.arguments << ")";
}

// The output fed in pieces of `step` bytes (0: whole), fragments joined as a
// client joins streamed deltas.
Parsed parse(ToolCallFormat format, std::string_view output, size_t step = 0) {
    int n_ids = 0;
    auto parser = make_tool_call_parser(format, [&] { return "id" + std::to_string(n_ids++); });
    Parsed parsed;
    auto add = [&](ParsedOutput&& out) {
        parsed.content += out.content;
        for (const ToolCallFragment& fragment : out.tool_calls) {
            if (!fragment.id.empty()) {
                EXPECT_EQ(fragment.index, static_cast<int32_t>(parsed.calls.size()));
                parsed.calls.push_back({fragment.name, ""});
                parsed.ids.push_back(fragment.id);
            }
            ASSERT_LT(static_cast<size_t>(fragment.index), parsed.calls.size())
                << "arguments before the call's first fragment";
            parsed.calls[static_cast<size_t>(fragment.index)].arguments += fragment.arguments;
        }
    };
    if (step == 0) step = output.size() + 1;
    for (size_t at = 0; at < output.size(); at += step) add(parser->push(output.substr(at, step)));
    add(parser->finish());
    return parsed;
}

// Every way of cutting the output up gives the same result.
Parsed parse_every_way(ToolCallFormat format, std::string_view output) {
    const Parsed whole = parse(format, output);
    for (size_t step : {1, 2, 3, 7}) {
        const Parsed pieces = parse(format, output, step);
        EXPECT_EQ(pieces.content, whole.content) << "step " << step;
        EXPECT_EQ(pieces.calls, whole.calls) << "step " << step;
    }
    return whole;
}

TEST(HermesToolCallParser, ReadsACallAfterText) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Hermes,
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
        "\"Paris\", \"days\": [1, 2]}}\n</tool_call>");
    EXPECT_EQ(parsed.content, "Let me check.");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"get_weather", R"({"city": "Paris", "days": [1, 2]})"}));
    EXPECT_EQ(parsed.ids[0], "id0");
}

TEST(HermesToolCallParser, ReadsSeveralCallsAndDropsTheWhitespaceBetween) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Hermes,
        "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": \"}{\\\"\"}}\n</tool_call>\n"
        "<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>\n");
    EXPECT_EQ(parsed.content, "");
    ASSERT_EQ(parsed.calls.size(), 2u);
    EXPECT_EQ(parsed.calls[0], (Call{"a", R"({"x": "}{\""})"}));
    EXPECT_EQ(parsed.calls[1], (Call{"b", "{}"}));
}

TEST(HermesToolCallParser, KeepsTextBetweenAndAfterCalls) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Hermes,
        "First: <tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call> then "
        "<tool_call>{\"name\": \"b\", \"arguments\": {\"k\": true}}</tool_call> done.");
    EXPECT_EQ(parsed.content, "First:  then  done.");
    ASSERT_EQ(parsed.calls.size(), 2u);
    EXPECT_EQ(parsed.calls[1], (Call{"b", R"({"k": true})"}));
}

TEST(HermesToolCallParser, TakesArgumentsWrittenBeforeTheNameOrAsAString) {
    Parsed parsed =
        parse_every_way(ToolCallFormat::Hermes,
                        "<tool_call>{\"arguments\": {\"a\": 1}, \"name\": \"f\"}</tool_call>");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"f", R"({"a": 1})"}));
    parsed = parse_every_way(
        ToolCallFormat::Hermes,
        "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"f", R"({"a": 1})"}));
    parsed = parse_every_way(ToolCallFormat::Hermes, "<tool_call>{\"name\": \"f\"}</tool_call>");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"f", "{}"}));
}

TEST(HermesToolCallParser, GivesBackWhatIsNoCallAsContent) {
    const std::string text = "a < b, <tool_call>not json</tool_call> and <tool";
    const Parsed parsed = parse_every_way(ToolCallFormat::Hermes, text);
    EXPECT_EQ(parsed.content, text);
    EXPECT_TRUE(parsed.calls.empty());
    const std::string other = "<tool_call>{\"city\": \"Paris\"}</tool_call>";
    EXPECT_EQ(parse_every_way(ToolCallFormat::Hermes, other).content, other);
}

TEST(HermesToolCallParser, KeepsACutOffCallWithTheArgumentsSoFar) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Hermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"f", R"({"a": [1, 2)"}));
}

TEST(Llama3JsonToolCallParser, ReadsABareCall) {
    const Parsed parsed =
        parse_every_way(ToolCallFormat::Llama3Json,
                        "  {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}");
    EXPECT_EQ(parsed.content, "");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"get_weather", R"({"city": "Paris"})"}));
}

TEST(Llama3JsonToolCallParser, ReadsPythonTagCallsSeparatedBySemicolons) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Llama3Json,
        "<|python_tag|>{\"name\": \"a\", \"arguments\": {\"x\": 1}}; {\"name\": \"b\", "
        "\"parameters\": {\"y\": -2.5e3}}");
    ASSERT_EQ(parsed.calls.size(), 2u);
    EXPECT_EQ(parsed.calls[0], (Call{"a", R"({"x": 1})"}));
    EXPECT_EQ(parsed.calls[1], (Call{"b", R"({"y": -2.5e3})"}));
}

TEST(Llama3JsonToolCallParser, ReadsTextThenACall) {
    const Parsed parsed =
        parse_every_way(ToolCallFormat::Llama3Json,
                        "Sure, checking. <|python_tag|>{\"name\": \"f\", \"parameters\": {}}");
    EXPECT_EQ(parsed.content, "Sure, checking.");
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0], (Call{"f", "{}"}));
}

TEST(Llama3JsonToolCallParser, LeavesOtherJsonAndTextAsContent) {
    for (const std::string& text : {std::string(R"({"answer": 42, "name": "x"})"),
                                    std::string("The sky is {blue}."), std::string("[1, 2]")}) {
        const Parsed parsed = parse_every_way(ToolCallFormat::Llama3Json, text);
        EXPECT_EQ(parsed.content, text);
        EXPECT_TRUE(parsed.calls.empty());
    }
}

TEST(MistralToolCallParser, ReadsAListOfCalls) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Mistral,
        "Sure.[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": [1, {\"y\": 2}]}}, "
        "{\"name\": \"b\", \"arguments\": {}}]");
    EXPECT_EQ(parsed.content, "Sure.");
    ASSERT_EQ(parsed.calls.size(), 2u);
    EXPECT_EQ(parsed.calls[0], (Call{"a", R"({"x": [1, {"y": 2}]})"}));
    EXPECT_EQ(parsed.calls[1], (Call{"b", "{}"}));
}

TEST(MistralToolCallParser, ReadsTheNameArgsForm) {
    const Parsed parsed = parse_every_way(
        ToolCallFormat::Mistral,
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]other[CALL_ID]a1b2c3d4e"
        "[ARGS]{}");
    ASSERT_EQ(parsed.calls.size(), 2u);
    EXPECT_EQ(parsed.calls[0], (Call{"get_weather", R"({"city": "Paris"})"}));
    EXPECT_EQ(parsed.calls[1], (Call{"other", "{}"}));
    EXPECT_EQ(parsed.content, "");
}

TEST(MistralToolCallParser, LeavesTextWithBracketsAsContent) {
    for (const std::string& text :
         {std::string("Use [TOOL] or [x] here"), std::string("[TOOL_CALLS] is a marker\nok"),
          std::string("[TOOL_CALLS][not json]")}) {
        const Parsed parsed = parse_every_way(ToolCallFormat::Mistral, text);
        EXPECT_EQ(parsed.content, text);
        EXPECT_TRUE(parsed.calls.empty());
    }
}

TEST(ToolCallParser, MistralIdsAreNineLettersAndDigits) {
    const std::string id = new_tool_call_id(ToolCallFormat::Mistral);
    EXPECT_EQ(id.size(), 9u);
    EXPECT_TRUE(std::all_of(id.begin(), id.end(), [](char c) { return std::isalnum(c); }));
    EXPECT_EQ(new_tool_call_id(ToolCallFormat::Hermes).rfind("call_", 0), 0u);
}

TEST(ToolCallParser, FormatIsPickedFromTheTemplate) {
    EXPECT_EQ(detect_tool_call_format("{{ '[TOOL_CALLS]' }}"), ToolCallFormat::Mistral);
    EXPECT_EQ(detect_tool_call_format("<tool_call>\\n{{ tool_call | tojson }}"),
              ToolCallFormat::Hermes);
    EXPECT_EQ(detect_tool_call_format("<|start_header_id|>ipython<|end_header_id|>"),
              ToolCallFormat::Llama3Json);
    EXPECT_EQ(detect_tool_call_format("<|im_start|>"), std::nullopt);
    EXPECT_EQ(tool_call_format_by_name("llama3_json"), ToolCallFormat::Llama3Json);
    EXPECT_FALSE(tool_call_format_by_name("pythonic").has_value());
}

TEST(ToolCallParser, FormatOfRealTemplates) {
    using tokenizer::test::read_source_file;
    constexpr std::optional<ToolCallFormat> kNone = std::nullopt;
    const std::map<std::string, std::optional<ToolCallFormat>> expected = {
        {"tests/data/chat_templates/hermes-3-llama-3.1-8b-tool-use.jinja", ToolCallFormat::Hermes},
        {"tests/data/chat_templates/qwen2.5-7b-instruct.jinja", ToolCallFormat::Hermes},
        {"tests/data/chat_templates/qwen3-0.6b.jinja", ToolCallFormat::Hermes},
        // llama.cpp's copy of SmolLM3's template renders no tools.
        {"tests/data/chat_templates/smollm3-3b.jinja", kNone},
        {"tests/data/chat_templates/llama-3.2-3b-instruct.jinja", ToolCallFormat::Llama3Json},
        {"src/ladder/tokenizer/builtin_chat_templates/llama3.1.jinja", ToolCallFormat::Llama3Json},
        {"src/ladder/tokenizer/builtin_chat_templates/mistral-v3.jinja", ToolCallFormat::Mistral},
        {"src/ladder/tokenizer/builtin_chat_templates/mistral-v3-tekken.jinja",
         ToolCallFormat::Mistral},
        {"tests/data/chat_templates/mistral-small-3.2-24b-instruct-2506.jinja",
         ToolCallFormat::Mistral},
        // Other call syntaxes inside <tool_call> tags.
        {"tests/data/chat_templates/qwen3-coder.jinja", kNone},
        {"tests/data/chat_templates/glm-4.6.jinja", kNone},
        {"tests/data/chat_templates/deepseek-r1-distill-qwen-32b.jinja", kNone},
        {"tests/data/chat_templates/smollm2.jinja", kNone},
        {"src/ladder/tokenizer/builtin_chat_templates/gemma.jinja", kNone},
        {"src/ladder/tokenizer/builtin_chat_templates/llama3.jinja", kNone},
    };
    for (const auto& [path, format] : expected) {
        const std::optional<ToolCallFormat> found = detect_tool_call_format(read_source_file(path));
        EXPECT_EQ(found ? tool_call_format_name(*found) : "none",
                  format ? tool_call_format_name(*format) : "none")
            << path;
    }
}

// --- reasoning

TEST(ReasoningParser, ReasoningTemplatesAreKnownByTheirThinkTags) {
    EXPECT_TRUE(template_reasons(
        tokenizer::test::read_source_file("tests/data/chat_templates/qwq-32b.jinja")));
    EXPECT_FALSE(template_reasons(tokenizer::ChatTemplate::builtin("chatml", {}).source()));
}

ReasonedText reason(std::string_view output, size_t step) {
    ReasoningParser parser;
    ReasonedText all;
    for (size_t at = 0; at < output.size(); at += step) {
        ReasonedText part = parser.push(output.substr(at, step));
        all.reasoning += part.reasoning;
        all.content += part.content;
    }
    ReasonedText part = parser.finish();
    all.reasoning += part.reasoning;
    all.content += part.content;
    return all;
}

TEST(ReasoningParser, SplitsThinkingFromTheAnswerLikeDeepSeekR1) {
    for (size_t step : {1, 2, 5, 100}) {
        ReasonedText split = reason("<think>\nFirst, 2 < 3.\n</think>\n\nThe answer is 3.", step);
        EXPECT_EQ(split.reasoning, "\nFirst, 2 < 3.\n") << step;
        EXPECT_EQ(split.content, "\n\nThe answer is 3.") << step;
        // The template wrote <think> into the prompt: the output starts inside.
        split = reason("Plan it.</think>Done", step);
        EXPECT_EQ(split.reasoning, "Plan it.");
        EXPECT_EQ(split.content, "Done");
        // Never closed: all of it was thinking.
        split = reason("<thin and on </thi", step);
        EXPECT_EQ(split.reasoning, "<thin and on </thi");
        EXPECT_EQ(split.content, "");
    }
}

TEST(ChatOutputParser, ReadsReasoningThenToolCalls) {
    ChatOutputParser parser({ToolCallFormat::Hermes, true});
    MessageDelta all;
    const std::string output =
        "<think>Need the weather.</think>\n<tool_call>\n{\"name\": \"w\", \"arguments\": "
        "{\"c\": 1}}\n</tool_call>";
    for (char c : output) append_delta(all, parser.push(std::string_view(&c, 1)));
    append_delta(all, parser.finish());
    EXPECT_EQ(all.reasoning_content, "Need the weather.");
    EXPECT_EQ(all.content, "");
    EXPECT_TRUE(all.tool_calls_made);
    AssistantMessage message(true);
    message.add(all);
    const nlohmann::json json = message.to_json();
    EXPECT_TRUE(json["content"].is_null());
    EXPECT_EQ(json["reasoning_content"], "Need the weather.");
    ASSERT_EQ(json["tool_calls"].size(), 1u);
    EXPECT_EQ(json["tool_calls"][0]["function"]["name"], "w");
    EXPECT_EQ(json["tool_calls"][0]["function"]["arguments"], R"({"c": 1})");
    EXPECT_EQ(json["tool_calls"][0]["type"], "function");
}

TEST(ChatOutputParser, StreamedDeltasAreShapedAsOpenAISendsThem) {
    ChatOutputParser parser({ToolCallFormat::Hermes, false});
    MessageDelta first = parser.push("<tool_call>{\"name\": \"w\", \"arguments\": {\"c\"");
    const nlohmann::json delta = delta_json(first);
    ASSERT_EQ(delta["tool_calls"].size(), 1u);
    const nlohmann::json& call = delta["tool_calls"][0];
    EXPECT_EQ(call["index"], 0);
    EXPECT_TRUE(call["id"].is_string());
    EXPECT_EQ(call["type"], "function");
    EXPECT_EQ(call["function"]["name"], "w");
    EXPECT_EQ(call["function"]["arguments"], "{\"c\"");
    const nlohmann::json next = delta_json(parser.push(": 1}}</tool_call>"));
    EXPECT_EQ(next["tool_calls"][0],
              (nlohmann::json{{"index", 0}, {"function", {{"arguments", ": 1}"}}}}));
    EXPECT_FALSE(next.contains("content"));
}

}  // namespace
}  // namespace ladder::server
