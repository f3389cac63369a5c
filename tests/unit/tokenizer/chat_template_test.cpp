// Chat templates against the real Jinja templates rendered by jinja2
// (tests/data/chat_template_goldens.json, from scripts/goldens/chat_template_goldens.py),
// plus detection, overrides and the errors a caller sees.
#include "ladder/tokenizer/chat_template.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ladder/gguf/gguf_file.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {
namespace {

const std::filesystem::path kSourceDir = LADDER_SOURCE_DIR;

nlohmann::json load_goldens() {
    std::ifstream in(kSourceDir / "tests/data/chat_template_goldens.json");
    EXPECT_TRUE(in) << "tests/data/chat_template_goldens.json is missing";
    return nlohmann::json::parse(in);
}

std::vector<ChatMessage> messages_of(const nlohmann::json& array) {
    std::vector<ChatMessage> messages;
    for (const auto& m : array) {
        messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
    }
    return messages;
}

std::string error_of(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages) {
    try {
        chat_template.apply(messages, true);
    } catch (const util::InputError& error) {
        return error.what();
    }
    return "";
}

TEST(ChatTemplate, matches_jinja_rendering_of_real_templates) {
    const nlohmann::json goldens = load_goldens();
    std::map<std::string, ChatTemplate> templates;
    std::map<std::string, std::string> leading_bos;  // stripped where the template writes it
    for (const auto& t : goldens.at("templates")) {
        const std::string name = t.at("name");
        const std::string text = t.at("template");
        ChatSpecialTokens tokens{t.at("bos_token"), t.at("eos_token")};
        ChatTemplate chat_template = ChatTemplate::detect(text, tokens);
        EXPECT_EQ(chat_template.name(), t.at("format").get<std::string>())
            << "template " << name << " detected as the wrong format";
        templates.emplace(name, chat_template);
        leading_bos[name] = text.find("bos_token") != std::string::npos ? tokens.bos : "";
    }
    int n_checked = 0;
    for (const auto& c : goldens.at("cases")) {
        const std::string name = c.at("template");
        const ChatTemplate& chat_template = templates.at(name);
        const std::string conversation = c.at("conversation");
        const std::vector<ChatMessage> messages =
            messages_of(goldens.at("conversations").at(conversation));
        const bool add_generation_prompt = c.at("add_generation_prompt");
        const std::string where = name + " / " + conversation +
                                  (add_generation_prompt ? " / generation prompt" : "");
        if (c.contains("error")) {
            EXPECT_THROW(chat_template.apply(messages, add_generation_prompt), util::InputError)
                << where << ": Jinja raised \"" << c.at("error").get<std::string>()
                << "\" but ladder rendered a prompt";
            ++n_checked;
            continue;
        }
        std::string expected = c.at("rendered");
        const std::string& bos = leading_bos[name];
        if (!bos.empty() && expected.starts_with(bos)) expected.erase(0, bos.size());
        std::string actual;
        try {
            actual = chat_template.apply(messages, add_generation_prompt);
        } catch (const util::InputError& error) {
            ADD_FAILURE() << where << ": ladder refused a conversation Jinja renders: "
                          << error.what();
            continue;
        }
        EXPECT_EQ(actual, expected) << where;
        ++n_checked;
    }
    EXPECT_GT(n_checked, 200) << "the goldens file holds fewer cases than expected";
}

TEST(ChatTemplate, smollm2_template_injects_its_default_system_message) {
    const nlohmann::json goldens = load_goldens();
    std::string text;
    for (const auto& t : goldens.at("templates")) {
        if (t.at("name") == "smollm2") text = t.at("template");
    }
    ASSERT_FALSE(text.empty());
    const ChatTemplate chat_template = ChatTemplate::detect(text);
    ASSERT_TRUE(chat_template.default_system().has_value());
    EXPECT_EQ(*chat_template.default_system(),
              "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
    const std::vector<ChatMessage> messages = {{"user", "Hi"}};
    EXPECT_EQ(chat_template.apply(messages, true),
              "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
              "Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, detects_chatml_in_the_default_model_file) {
    const std::filesystem::path path = kSourceDir / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
    const auto file = gguf::GgufFile::open(path.string());
    const std::optional<std::string> text = file->get_string("tokenizer.chat_template");
    ASSERT_TRUE(text.has_value()) << "no tokenizer.chat_template in " << path;
    const ChatTemplate chat_template = ChatTemplate::detect(*text);
    EXPECT_EQ(chat_template.format(), ChatFormat::ChatML);
    ASSERT_TRUE(chat_template.default_system().has_value());
    EXPECT_TRUE(chat_template.default_system()->starts_with("You are a helpful AI assistant"));
}

// Gemma 3's own template (the instruction-tuned model's tokenizer.chat_template,
// as scripts/goldens/chat_template_goldens.py embeds it): no system role, so
// the system message opens the first user turn; the assistant is "model". The
// <bos> the template writes is the tokenizer's to add.
TEST(ChatTemplate, gemma_3_template_puts_the_system_message_in_the_first_user_turn) {
    const nlohmann::json goldens = load_goldens();
    std::string text;
    for (const auto& t : goldens.at("templates")) {
        if (t.at("name") == "gemma-3") text = t.at("template");
    }
    ASSERT_FALSE(text.empty()) << "the goldens lack Gemma 3's template";
    const ChatTemplate chat_template = ChatTemplate::detect(text, {"<bos>", "<eos>"});
    const std::vector<ChatMessage> messages = {{"system", "You are terse."},
                                               {"user", "What is 2+2?"},
                                               {"assistant", "4"},
                                               {"user", "3+3?"}};
    EXPECT_EQ(chat_template.apply(messages, true),
              "<start_of_turn>user\nYou are terse.\n\nWhat is 2+2?<end_of_turn>\n"
              "<start_of_turn>model\n4<end_of_turn>\n"
              "<start_of_turn>user\n3+3?<end_of_turn>\n"
              "<start_of_turn>model\n");
    const std::vector<ChatMessage> one_turn = {{"user", "Hi"}};
    EXPECT_EQ(chat_template.apply(one_turn, false), "<start_of_turn>user\nHi<end_of_turn>\n");
}

TEST(ChatTemplate, plain_chatml_has_no_default_system_message) {
    const ChatTemplate by_name = ChatTemplate::by_name("chatml");
    EXPECT_FALSE(by_name.default_system().has_value());
    const std::vector<ChatMessage> messages = {{"user", "Hi"}, {"assistant", "Hello"}};
    EXPECT_EQ(by_name.apply(messages, false),
              "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n");
}

TEST(ChatTemplate, by_name_accepts_every_known_name) {
    for (std::string_view name : ChatTemplate::known_names()) {
        EXPECT_EQ(ChatTemplate::by_name(name).name(), name);
        EXPECT_EQ(ChatTemplate::detect(name).name(), name) << "a known name is a template too";
    }
}

TEST(ChatTemplate, unknown_name_is_rejected_with_the_known_names) {
    try {
        ChatTemplate::by_name("vicuna");
        FAIL() << "by_name accepted an unknown name";
    } catch (const util::InputError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("vicuna"), std::string::npos) << message;
        for (std::string_view name : ChatTemplate::known_names()) {
            EXPECT_NE(message.find(name), std::string::npos) << message << " lacks " << name;
        }
    }
}

TEST(ChatTemplate, unknown_or_missing_template_is_rejected) {
    EXPECT_THROW(ChatTemplate::detect("{{ 'USER: ' + messages[0]['content'] }}"),
                 util::InputError);
    EXPECT_THROW(ChatTemplate::detect(""), util::InputError);
    // Phi-4 writes <|im_start|> but is not ChatML.
    EXPECT_THROW(ChatTemplate::detect("<|im_start|>user<|im_sep|>"), util::InputError);
    try {
        ChatTemplate::detect("{{ nonsense }}");
        FAIL() << "detect accepted a template it does not know";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("--chat-template"), std::string::npos);
        EXPECT_NE(std::string(error.what()).find("chatml"), std::string::npos);
    }
}

TEST(ChatTemplate, rejects_unknown_roles_and_empty_chats) {
    const ChatTemplate chat_template = ChatTemplate::by_name("chatml");
    const std::string message = error_of(chat_template, {{"user", "a"}, {"tool", "b"}});
    EXPECT_NE(message.find("messages[1]"), std::string::npos) << message;
    EXPECT_NE(message.find("'tool'"), std::string::npos) << message;
    EXPECT_THROW(chat_template.apply({}, true), util::InputError);
}

TEST(ChatTemplate, alternating_formats_name_the_offending_message) {
    for (std::string_view name : {"llama2", "mistral-v1", "mistral-v3", "gemma"}) {
        const ChatTemplate chat_template = ChatTemplate::by_name(name);
        const std::string message =
            error_of(chat_template, {{"system", "s"}, {"user", "a"}, {"user", "b"}});
        EXPECT_NE(message.find("messages[2]"), std::string::npos) << name << ": " << message;
        EXPECT_NE(message.find("alternating"), std::string::npos) << name << ": " << message;
        const std::string late_system =
            error_of(chat_template, {{"user", "a"}, {"assistant", "b"}, {"system", "c"}});
        EXPECT_NE(late_system.find("system message only first"), std::string::npos)
            << name << ": " << late_system;
    }
}

TEST(ChatTemplate, llama2_writes_the_models_own_bos_and_eos_text) {
    const ChatTemplate chat_template = ChatTemplate::by_name("llama2", {"<BOS>", "<EOS>"});
    const std::vector<ChatMessage> messages = {{"user", "a"}, {"assistant", "b"}, {"user", "c"}};
    EXPECT_EQ(chat_template.apply(messages, true), "[INST] a [/INST] b <EOS><BOS>[INST] c [/INST]");
}

}  // namespace
}  // namespace ladder::tokenizer
