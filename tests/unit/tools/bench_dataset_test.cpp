// `ladder bench`'s prompts: the same seed gives the same prompts, lengths
// are what was asked, the prefix workload shares its block, and the files'
// formats are read (or refused, naming the line).
#include "ladder/tools/bench_dataset.h"

#include <gtest/gtest.h>

#include <map>

#include "ladder/tools/bench_client.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

DatasetOptions options_for(const std::string& kind, BenchEndpoint endpoint) {
    DatasetOptions options;
    options.kind = kind;
    options.endpoint = endpoint;
    options.n_prompts = 20;
    options.input_len = 32;
    options.output_len = 8;
    options.prefix_len = 64;
    options.seed = 7;
    return options;
}

TEST(BenchDataset, the_same_seed_gives_the_same_prompts) {
    for (const char* kind : {"random", "prefix"}) {
        for (const BenchEndpoint endpoint : {BenchEndpoint::Completions, BenchEndpoint::Chat}) {
            DatasetOptions options = options_for(kind, endpoint);
            options.range_ratio = 0.5;
            const std::vector<BenchPrompt> first = make_dataset(options);
            const std::vector<BenchPrompt> again = make_dataset(options);
            ASSERT_EQ(first.size(), 20u);
            for (size_t i = 0; i < first.size(); ++i) {
                EXPECT_EQ(first[i].payload, again[i].payload) << kind << " prompt " << i;
                EXPECT_EQ(first[i].max_tokens, again[i].max_tokens);
            }
            options.seed = 8;
            EXPECT_NE(make_dataset(options)[0].payload, first[0].payload) << kind;
        }
    }
}

TEST(BenchDataset, random_token_ids_have_the_exact_lengths) {
    const std::vector<BenchPrompt> prompts =
        make_dataset(options_for("random", BenchEndpoint::Completions));
    for (const BenchPrompt& prompt : prompts) {
        ASSERT_TRUE(prompt.payload.is_array());
        EXPECT_EQ(prompt.payload.size(), 32u);
        EXPECT_EQ(prompt.prompt_len, 32);
        EXPECT_EQ(prompt.max_tokens, 8);
        for (const auto& id : prompt.payload) {
            EXPECT_GE(id.get<int64_t>(), 1000) << "clear of special and byte tokens";
            EXPECT_LT(id.get<int64_t>(), 30000) << "inside a 32k vocabulary";
        }
    }
    EXPECT_NE(prompts[0].payload, prompts[1].payload) << "every prompt is its own";
}

TEST(BenchDataset, range_ratio_draws_lengths_within_the_range) {
    DatasetOptions options = options_for("random", BenchEndpoint::Completions);
    options.n_prompts = 200;
    options.input_len = 100;
    options.output_len = 10;
    options.range_ratio = 0.5;
    int64_t shortest = 1000, longest = 0;
    for (const BenchPrompt& prompt : make_dataset(options)) {
        EXPECT_GE(prompt.prompt_len, 50);
        EXPECT_LE(prompt.prompt_len, 150);
        EXPECT_GE(prompt.max_tokens, 5);
        EXPECT_LE(prompt.max_tokens, 15);
        shortest = std::min(shortest, prompt.prompt_len);
        longest = std::max(longest, prompt.prompt_len);
    }
    EXPECT_LT(shortest, 60);
    EXPECT_GT(longest, 140);
    options.range_ratio = 1.0;
    EXPECT_THROW(make_dataset(options), util::InputError);
}

TEST(BenchDataset, prefix_prompts_share_their_block_and_differ_after_it) {
    const std::vector<BenchPrompt> ids =
        make_dataset(options_for("prefix", BenchEndpoint::Completions));
    for (const BenchPrompt& prompt : ids) {
        ASSERT_EQ(prompt.payload.size(), 64u + 32u);
        EXPECT_EQ(prompt.prompt_len, 96);
        for (size_t i = 0; i < 64; ++i) ASSERT_EQ(prompt.payload[i], ids[0].payload[i]);
    }
    EXPECT_NE(ids[0].payload, ids[1].payload);

    const std::vector<BenchPrompt> chat = make_dataset(options_for("prefix", BenchEndpoint::Chat));
    ASSERT_EQ(chat[0].payload.size(), 2u);
    EXPECT_EQ(chat[0].payload[0]["role"], "system");
    EXPECT_EQ(chat[0].payload[0], chat[1].payload[0]) << "the system block is shared";
    EXPECT_NE(chat[0].payload[1], chat[1].payload[1]) << "the question is not";
}

TEST(BenchDataset, several_prefixes_each_shared_by_the_prompts_that_draw_it) {
    DatasetOptions options = options_for("prefix", BenchEndpoint::Chat);
    options.n_prompts = 60;
    options.n_prefixes = 4;
    std::map<std::string, int> prompts_per_block;
    for (const BenchPrompt& prompt : make_dataset(options)) {
        EXPECT_EQ(prompt.prompt_len, 64 + 32);
        ++prompts_per_block[prompt.payload[0]["content"].get<std::string>()];
    }
    ASSERT_EQ(prompts_per_block.size(), 4u);
    for (const auto& [block, count] : prompts_per_block) EXPECT_GE(count, 5) << block;

    // One block: every prompt shares it.
    options.n_prefixes = 1;
    const std::vector<BenchPrompt> one = make_dataset(options);
    for (const BenchPrompt& prompt : one) EXPECT_EQ(prompt.payload[0], one[0].payload[0]);
    options.n_prefixes = 0;
    EXPECT_THROW(make_dataset(options), util::InputError);
}

TEST(BenchDataset, prefix_defaults_are_the_support_bot) {
    DatasetOptions options;
    options.kind = "prefix";
    options.n_prompts = 1;
    const BenchPrompt prompt = make_dataset(options).front();
    EXPECT_EQ(prompt.prompt_len, 3000 + 200);
    EXPECT_EQ(prompt.max_tokens, 300);
}

TEST(BenchDataset, sharegpt_takes_the_first_exchange_of_each_conversation) {
    const std::string text = R"([
        {"id": "a", "conversations": [{"from": "human", "value": "What is a GPU?"},
                                      {"from": "gpt", "value": "A graphics processor, 40 chars"}]},
        {"id": "b", "conversations": [{"from": "human", "value": "alone"}]},
        {"id": "c", "conversations": [{"from": "system", "value": "be brief"},
                                      {"from": "human", "value": "Hi"},
                                      {"from": "gpt", "value": "Hello!!!"}]}])";
    DatasetOptions options;
    options.n_prompts = 10;
    const std::vector<BenchPrompt> prompts = sharegpt_from_text(text, "share.json", options);
    ASSERT_EQ(prompts.size(), 2u) << "the conversation without a reply is skipped";
    std::vector<std::string> asked;
    for (const BenchPrompt& prompt : prompts) asked.push_back(prompt.payload.get<std::string>());
    std::sort(asked.begin(), asked.end());
    EXPECT_EQ(asked, (std::vector<std::string>{"Hi", "What is a GPU?"}));
    for (const BenchPrompt& prompt : prompts) {
        if (prompt.payload == "Hi") {
            EXPECT_EQ(prompt.max_tokens, 2) << "8 characters, 2 tokens";
        }
    }
    options.output_len = 5;
    options.endpoint = BenchEndpoint::Chat;
    const BenchPrompt chat = sharegpt_from_text(text, "share.json", options).front();
    EXPECT_EQ(chat.max_tokens, 5);
    EXPECT_EQ(chat.payload[0]["role"], "user");
    EXPECT_THROW(sharegpt_from_text("{}", "share.json", options), util::InputError);
}

TEST(BenchDataset, jsonl_reads_prompts_messages_and_max_tokens) {
    const std::string text =
        "{\"prompt\": \"Once upon a time\", \"max_tokens\": 12}\n"
        "\n"
        "{\"prompt\": [101, 102, 103]}\n";
    DatasetOptions options;
    const std::vector<BenchPrompt> prompts = jsonl_from_text(text, "r.jsonl", options);
    ASSERT_EQ(prompts.size(), 2u);
    EXPECT_EQ(prompts[0].payload, "Once upon a time");
    EXPECT_EQ(prompts[0].max_tokens, 12);
    EXPECT_EQ(prompts[1].prompt_len, 3);
    EXPECT_EQ(prompts[1].max_tokens, 128) << "the default output length";

    options.endpoint = BenchEndpoint::Chat;
    const std::string chat = R"({"messages": [{"role": "user", "content": "Hi"}]})";
    EXPECT_EQ(jsonl_from_text(chat, "c.jsonl", options)[0].payload[0]["content"], "Hi");
    try {
        jsonl_from_text("{\"prompt\": \"ok\"}\n{\"prompt\": [1, 2]}\n", "c.jsonl", options);
        FAIL() << "token ids cannot go to chat";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("c.jsonl:2"), std::string::npos) << error.what();
    }
    options.endpoint = BenchEndpoint::Completions;
    EXPECT_THROW(jsonl_from_text(chat, "c.jsonl", options), util::InputError);
    EXPECT_THROW(jsonl_from_text("not json\n", "c.jsonl", options), util::InputError);
    EXPECT_THROW(jsonl_from_text("{\"prompt\": \"x\", \"max_tokens\": 0}", "c.jsonl", options),
                 util::InputError);
}

TEST(BenchDataset, bad_options_are_refused) {
    DatasetOptions options;
    options.kind = "sharegpt";
    EXPECT_THROW(make_dataset(options), util::InputError) << "sharegpt needs a file";
    options.kind = "nonsense";
    EXPECT_THROW(make_dataset(options), util::InputError);
    options.kind = "random";
    options.n_prompts = 0;
    EXPECT_THROW(make_dataset(options), util::InputError);
}

TEST(BenchRequestBody, streams_with_usage_and_ignores_eos) {
    BenchTarget target;
    target.model = "m";
    BenchPrompt prompt{nlohmann::json::array({1, 2, 3}), 3, 8};
    const nlohmann::json body = request_body(target, prompt);
    EXPECT_EQ(body["prompt"], nlohmann::json::array({1, 2, 3}));
    EXPECT_EQ(body["max_tokens"], 8);
    EXPECT_EQ(body["stream"], true);
    EXPECT_EQ(body["stream_options"]["include_usage"], true);
    EXPECT_EQ(body["ignore_eos"], true);
    EXPECT_EQ(body["model"], "m");
    target.endpoint = BenchEndpoint::Chat;
    EXPECT_EQ(request_body(target, prompt)["max_completion_tokens"], 8);
    EXPECT_TRUE(request_body(target, prompt).contains("messages"));
}

}  // namespace
}  // namespace ladder::tools
