// parse_chat_inputs: a chat request's messages, tools and template fields as
// the chat template gets them (vLLM's conversions), and each malformed field
// a 400 that names it.
#include "ladder/server/chat_prompt.h"

#include <gtest/gtest.h>

#include "ladder/server/api_error.h"

namespace ladder::server {
namespace {

using json = nlohmann::json;

std::string rejected_param(const json& body) {
    try {
        parse_chat_inputs(body);
    } catch (const ApiError& error) {
        EXPECT_EQ(error.status(), 400) << error.what();
        return error.param();
    }
    ADD_FAILURE() << "accepted: " << body.dump();
    return "";
}

const json kTools =
    json::array({{{"type", "function"},
                  {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}});

TEST(ChatInputs, PassesToolsCallsAndResultsAsTheTemplateExpectsThem) {
    const json body = {
        {"messages",
         {{{"role", "developer"}, {"content", "Be brief."}},
          {{"role", "user"},
           {"content",
            {{{"type", "text"}, {"text", "Weather "}}, {{"type", "text"}, {"text", "in Paris?"}}}}},
          {{"role", "assistant"},
           {"content", nullptr},
           {"tool_calls",
            {{{"id", "call12345"},
              {"type", "function"},
              {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Paris\"}"}}}}}}},
          {{"role", "tool"}, {"tool_call_id", "call12345"}, {"content", "21 C"}}}},
        {"tools", kTools},
        {"chat_template_kwargs", {{"enable_thinking", false}}}};
    const tokenizer::ChatInputs inputs = parse_chat_inputs(body);
    ASSERT_EQ(inputs.messages.size(), 4u);
    EXPECT_EQ(inputs.messages[0]["role"], "system");
    EXPECT_EQ(inputs.messages[1]["content"], "Weather in Paris?");
    EXPECT_EQ(inputs.messages[2]["content"], "");
    EXPECT_EQ(inputs.messages[2]["tool_calls"][0]["function"]["arguments"],
              nlohmann::ordered_json({{"city", "Paris"}}));
    EXPECT_EQ(inputs.messages[2]["tool_calls"][0]["id"], "call12345");
    EXPECT_EQ(inputs.messages[3]["tool_call_id"], "call12345");
    EXPECT_EQ(inputs.tools.dump(), kTools.dump());
    EXPECT_EQ(inputs.kwargs["enable_thinking"], false);
    EXPECT_TRUE(inputs.add_generation_prompt);
    EXPECT_FALSE(inputs.continue_final_message);
}

TEST(ChatInputs, WithoutToolsTheTemplateSeesNone) {
    const tokenizer::ChatInputs inputs = parse_chat_inputs(
        {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"tools", nullptr}});
    EXPECT_TRUE(inputs.tools.is_null());
}

TEST(ChatInputs, ContinuesTheFinalMessageWhenAsked) {
    const tokenizer::ChatInputs inputs =
        parse_chat_inputs({{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                           {"add_generation_prompt", false},
                           {"continue_final_message", true}});
    EXPECT_FALSE(inputs.add_generation_prompt);
    EXPECT_TRUE(inputs.continue_final_message);
}

TEST(ChatInputs, RejectsEachMalformedFieldByName) {
    const json user = {{{"role", "user"}, {"content", "hi"}}};
    const json bad_call = {
        {{"role", "assistant"},
         {"tool_calls", {{{"function", {{"name", "f"}, {"arguments", "{not json"}}}}}}}};
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"messages", json::array()}}, "messages"},
        {{{"messages", {{{"role", "narrator"}, {"content", "x"}}}}}, "messages"},
        {{{"messages", bad_call}}, "messages"},
        {{{"messages", {{{"role", "assistant"}, {"tool_calls", "x"}}}}}, "messages"},
        {{{"messages", {{{"role", "assistant"}, {"tool_calls", {{{"id", "x"}}}}}}}}, "messages"},
        {{{"messages", user}, {"tools", {{"type", "function"}}}}, "tools"},
        {{{"messages", user}, {"tools", {1}}}, "tools"},
        {{{"messages", user}, {"chat_template_kwargs", "x"}}, "chat_template_kwargs"},
        {{{"messages", user}, {"chat_template_kwargs", {{"messages", 1}}}}, "chat_template_kwargs"},
        {{{"messages", user}, {"chat_template", "{{ 1 }}"}}, "chat_template"},
        {{{"messages", user}, {"add_generation_prompt", "yes"}}, "add_generation_prompt"},
        {{{"messages", user}, {"continue_final_message", true}}, "continue_final_message"},
    };
    for (const auto& [body, param] : cases) EXPECT_EQ(rejected_param(body), param) << body.dump();
}

}  // namespace
}  // namespace ladder::server
