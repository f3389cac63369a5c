// Chat templates against real models' Jinja templates rendered by jinja2 as
// transformers.apply_chat_template renders them (tests/data/chat_template_goldens.json,
// from scripts/goldens/chat_template_goldens.py), with and without tools; plus the
// built-in templates, the tool-call format each template implies, and the errors a
// caller sees.
#include "ladder/tokenizer/chat_template.h"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jinja_test_support.h"
#include "ladder/engine/tokenizer_loader.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;

jinja::RenderOptions golden_options() {
    jinja::RenderOptions options;
    options.clock = test::golden_now;
    return options;
}

std::string error_of(const ChatTemplate& chat_template, const ChatInputs& inputs) {
    try {
        chat_template.render(inputs);
    } catch (const util::InputError& error) {
        return error.what();
    }
    return "";
}

ChatInputs user_says(const std::string& text) {
    ChatInputs inputs;
    inputs.messages = ordered_json::array({{{"role", "user"}, {"content", text}}});
    return inputs;
}

TEST(ChatTemplate, renders_real_templates_as_transformers_does) {
    const ordered_json goldens = test::load_goldens("tests/data/chat_template_goldens.json");
    std::map<std::string, ChatTemplate> templates;
    std::map<std::string, std::string> sources;
    for (const auto& t : goldens.at("templates")) {
        const std::string name = t.at("name");
        sources[name] = test::read_source_file(t.at("file"));
        templates.emplace(name, ChatTemplate::from_source(
                                    sources[name], {t.at("bos_token"), t.at("eos_token")}, name));
    }
    int n_rendered = 0;
    std::set<std::string> rendered_with_tools;
    for (const auto& c : goldens.at("cases")) {
        const std::string name = c.at("template");
        ChatInputs inputs;
        inputs.messages = goldens.at("conversations").at(c.at("conversation").get<std::string>());
        if (c.at("tools").get<bool>()) inputs.tools = goldens.at("tools");
        inputs.add_generation_prompt = c.at("add_generation_prompt");
        if (c.contains("kwargs")) inputs.kwargs = c.at("kwargs");
        const std::string where = name + " / " + c.at("conversation").get<std::string>() +
                                  (inputs.add_generation_prompt ? " / generation prompt" : "") +
                                  (c.contains("kwargs") ? " / " + c.at("kwargs").dump() : "");
        if (c.contains("error")) {
            const std::string expected = c.at("error");
            std::string actual;
            try {
                templates.at(name).render(inputs, golden_options());
            } catch (const util::InputError& error) {
                actual = error.what();
            }
            EXPECT_FALSE(actual.empty())
                << where << ": jinja2 fails (" << expected << ") but ladder rendered a prompt";
            // A template's own raise_exception message reaches the caller as it is.
            if (sources[name].find(expected) != std::string::npos) {
                EXPECT_EQ(actual, expected) << where;
            }
            continue;
        }
        std::string actual;
        try {
            actual = templates.at(name).render(inputs, golden_options());
        } catch (const util::InputError& error) {
            ADD_FAILURE() << where << ": ladder fails where jinja2 renders: " << error.what();
            continue;
        }
        EXPECT_EQ(actual, c.at("rendered").get<std::string>()) << where;
        ++n_rendered;
        if (!inputs.tools.is_null()) rendered_with_tools.insert(name);
    }
    EXPECT_GE(templates.size(), 30u);
    EXPECT_GE(n_rendered, 700);
    EXPECT_GE(rendered_with_tools.size(), 20u)
        << "fewer templates rendered with tools than expected";
}

TEST(ChatTemplate, every_builtin_template_renders_a_conversation) {
    const std::vector<std::string> documented = {"chatml",     "llama2",     "llama3",
                                                 "mistral-v1", "mistral-v3", "mistral-v3-tekken",
                                                 "mistral-v7", "gemma"};
    const auto names = ChatTemplate::builtin_names();
    for (const std::string& name : documented) {
        EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    }
    for (std::string_view name : names) {
        const ChatTemplate chat_template = ChatTemplate::builtin(name, {"<s>", "</s>"});
        ChatInputs inputs = user_says("Hello there");
        const std::string prompt = chat_template.render(inputs);
        EXPECT_NE(prompt.find("Hello there"), std::string::npos) << name << ": " << prompt;
        EXPECT_EQ(chat_template.source(), ChatTemplate::builtin_source(name));
    }
}

TEST(ChatTemplate, an_unknown_builtin_name_lists_the_known_ones) {
    try {
        ChatTemplate::builtin("no-such-format", {});
        FAIL() << "an unknown name was accepted";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("chatml"), std::string::npos) << error.what();
    }
}

TEST(ChatTemplate, gemma_builtin_folds_the_system_message_into_the_first_turn) {
    const ChatTemplate gemma = ChatTemplate::builtin("gemma", {"<bos>", "<eos>"});
    ChatInputs inputs;
    inputs.messages = ordered_json::array(
        {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", " Hi "}}});
    EXPECT_EQ(gemma.render(inputs),
              "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatTemplate, a_request_with_tools_uses_the_tool_use_variant) {
    ChatTemplate chat_template =
        ChatTemplate::from_source("default: {{ messages[0].content }}", {});
    chat_template.add_variant("tool_use", "tools: {{ tools | map(attribute='name') | join(',') }}");
    EXPECT_EQ(chat_template.variant_names(), std::vector<std::string>{"tool_use"});
    ChatInputs inputs = user_says("hi");
    EXPECT_EQ(chat_template.render(inputs), "default: hi");
    inputs.tools = ordered_json::array({{{"name", "a"}}, {{"name", "b"}}});
    EXPECT_EQ(chat_template.render(inputs), "tools: a,b");
}

TEST(ChatTemplate, passes_tools_kwargs_and_special_tokens_as_variables) {
    const ChatTemplate chat_template = ChatTemplate::from_source(
        "{{ bos_token }}{{ tools is none }}|{{ documents is none }}|{{ enable_thinking }}|"
        "{{ add_generation_prompt }}{{ eos_token }}",
        {"<B>", "<E>"});
    ChatInputs inputs = user_says("hi");
    inputs.kwargs = {{"enable_thinking", false}};
    EXPECT_EQ(chat_template.render(inputs), "<B>True|True|False|True<E>");
    inputs.kwargs = {{"messages", 1}};
    EXPECT_NE(error_of(chat_template, inputs).find("may not set 'messages'"), std::string::npos);
}

TEST(ChatTemplate, continue_final_message_ends_inside_the_last_message) {
    const ChatTemplate chatml = ChatTemplate::builtin("chatml", {});
    ChatInputs inputs;
    inputs.messages = ordered_json::array(
        {{{"role", "user"}, {"content", "Count"}}, {{"role", "assistant"}, {"content", "1, 2,"}}});
    inputs.add_generation_prompt = false;
    inputs.continue_final_message = true;
    EXPECT_EQ(chatml.render(inputs),
              "<|im_start|>user\nCount<|im_end|>\n<|im_start|>assistant\n1, 2,");
    inputs.add_generation_prompt = true;
    EXPECT_FALSE(error_of(chatml, inputs).empty());
}

TEST(ChatTemplate, errors_name_the_problem_and_never_crash) {
    EXPECT_THROW(ChatTemplate::from_source("", {}), util::InputError);
    EXPECT_THROW(ChatTemplate::from_source("{% if %}", {}), util::InputError);
    const ChatTemplate raises =
        ChatTemplate::from_source("{{ raise_exception('Roles must alternate!') }}", {});
    EXPECT_EQ(error_of(raises, user_says("x")), "Roles must alternate!");
    const ChatTemplate endless = ChatTemplate::from_source(
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}",
        {});
    EXPECT_THAT(error_of(endless, user_says("x")), HasSubstr("more than 10000000 steps"));
    const ChatTemplate huge = ChatTemplate::from_source(
        "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s }}",
        {});
    EXPECT_THAT(error_of(huge, user_says("x")), HasSubstr("bytes"));
    const ChatTemplate recursive =
        ChatTemplate::from_source("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", {});
    EXPECT_THAT(error_of(recursive, user_says("x")), HasSubstr("more than 100 calls deep"));
}

TEST(ChatTemplate, strftime_now_reads_the_given_clock) {
    const ChatTemplate dated =
        ChatTemplate::from_source("Today is {{ strftime_now('%d %b %Y') }}.", {});
    EXPECT_EQ(dated.render(user_says("x"), golden_options()), "Today is 26 Jul 2024.");
}

// The model files' own templates, where `make model` / `make model-gemma3` fetched them.
class ChatTemplateModelFile : public ::testing::Test {
protected:
    std::unique_ptr<gguf::GgufFile> open_model(const std::string& file_name) {
        const std::filesystem::path path = test::kSourceDir / "models" / file_name;
        if (!std::filesystem::exists(path)) return nullptr;
        return gguf::GgufFile::open(path.string());
    }
};

TEST_F(ChatTemplateModelFile, smollm2_renders_its_default_system_message_without_a_bos) {
    const auto file = open_model("SmolLM2-135M-Instruct.Q4_1.gguf");
    if (!file) GTEST_SKIP() << "SmolLM2 not fetched";
    const auto tokenizer = engine::load_tokenizer(*file);
    const ChatTemplate chat_template = ChatTemplate::from_source(
        *file->get_string("tokenizer.chat_template"), {"<|im_start|>", "<|im_end|>"});
    const std::string prompt = chat_template.render(user_says("Hi"));
    EXPECT_EQ(prompt,
              "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
              "Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    EXPECT_EQ(chat_template.encode(*tokenizer, prompt), tokenizer->encode(prompt, true, true));
}

TEST_F(ChatTemplateModelFile, gemma_prompt_has_one_bos) {
    const auto file = open_model("gemma-3-270m-q4_k_m.gguf");
    if (!file) GTEST_SKIP() << "Gemma 3 not fetched";
    const auto tokenizer = engine::load_tokenizer(*file);
    const Vocabulary& vocabulary = tokenizer->vocabulary();
    ASSERT_TRUE(vocabulary.bos_id.has_value());
    const ChatTemplate gemma = ChatTemplate::builtin(
        "gemma", {vocabulary.tokens[static_cast<size_t>(*vocabulary.bos_id)], "<eos>"});
    const std::string prompt = gemma.render(user_says("Hi"));
    ASSERT_TRUE(prompt.starts_with("<bos>"));
    const std::vector<TokenId> ids = gemma.encode(*tokenizer, prompt);
    ASSERT_GE(ids.size(), 2u);
    EXPECT_EQ(ids[0], *vocabulary.bos_id);
    EXPECT_NE(ids[1], *vocabulary.bos_id) << "BOS written by the template and added again";
    // Without add_special the template's own BOS is kept as text it wrote.
    EXPECT_EQ(gemma.encode(*tokenizer, prompt, false), ids);
}

}  // namespace
}  // namespace ladder::tokenizer
