// parse_completion_request: every field mapped onto the engine request, and
// every bad one a 400 that names it.
#include "ladder/server/openai_request.h"

#include <gtest/gtest.h>

#include "ladder/server/api_error.h"
#include "server_test_support.h"

namespace ladder::server {
namespace {

using json = nlohmann::json;

class ServerRequestTest : public ::testing::Test {
protected:
    static constexpr int32_t kMaxModelLen = 512;

    static void SetUpTestSuite() { bundle_ = testing::shared_bundle(); }
    void SetUp() override {
        if (bundle_ == nullptr) GTEST_SKIP() << "default model not present; run `make model`";
    }

    static CompletionRequest completions(const json& body) {
        return parse_completion_request(body, Endpoint::Completions, *bundle_, kMaxModelLen);
    }
    static CompletionRequest chat(const json& body) {
        return parse_completion_request(body, Endpoint::ChatCompletions, *bundle_, kMaxModelLen);
    }
    // The parameter named by the 400 the body gets.
    static std::string rejected_param(const json& body, Endpoint endpoint) {
        try {
            parse_completion_request(body, endpoint, *bundle_, kMaxModelLen);
        } catch (const ApiError& error) {
            EXPECT_EQ(error.status(), 400) << error.what();
            return error.param();
        }
        ADD_FAILURE() << "accepted: " << body.dump();
        return "";
    }

    static engine::ModelBundle* bundle_;
};

engine::ModelBundle* ServerRequestTest::bundle_ = nullptr;

TEST_F(ServerRequestTest, MapsSamplingFieldsOntoTheEngineRequest) {
    const CompletionRequest request = completions({{"prompt", "Hello"},
                                                   {"temperature", 0.5},
                                                   {"top_p", 0.9},
                                                   {"top_k", 40},
                                                   {"min_p", 0.1},
                                                   {"frequency_penalty", 0.5},
                                                   {"presence_penalty", -1},
                                                   {"seed", 7},
                                                   {"max_tokens", 12},
                                                   {"stop", "\n"},
                                                   {"n", 3},
                                                   {"logprobs", 2},
                                                   {"stream", true},
                                                   {"stream_options", {{"include_usage", true}}},
                                                   {"model", "m"},
                                                   {"user", "u"},
                                                   {"logit_bias", {{"15", -100}}},
                                                   {"ignore_eos", true},
                                                   {"repetition_penalty", 1.1}});
    const engine::RequestParams& params = request.params;
    EXPECT_FLOAT_EQ(params.sampling.temperature, 0.5f);
    EXPECT_FLOAT_EQ(params.sampling.top_p, 0.9f);
    EXPECT_EQ(params.sampling.top_k, 40);
    EXPECT_FLOAT_EQ(params.sampling.min_p, 0.1f);
    EXPECT_FLOAT_EQ(params.sampling.frequency_penalty, 0.5f);
    EXPECT_FLOAT_EQ(params.sampling.presence_penalty, -1.0f);
    EXPECT_FLOAT_EQ(params.sampling.repetition_penalty, 1.1f);
    EXPECT_EQ(params.sampling.seed, 7u);
    EXPECT_EQ(params.max_tokens, 12);
    EXPECT_EQ(params.stop->texts(), std::vector<std::string>{"\n"});
    EXPECT_EQ(params.logprobs, 2);
    EXPECT_TRUE(params.ignore_eos);
    ASSERT_EQ(params.logit_bias->size(), 1u);
    EXPECT_EQ((*params.logit_bias)[0].first, 15);
    EXPECT_EQ(request.n, 3);
    EXPECT_TRUE(request.stream);
    EXPECT_TRUE(request.include_usage);
    EXPECT_EQ(request.model, "m");
    EXPECT_EQ(request.user, "u");
    ASSERT_EQ(request.prompts.size(), 1u);
    EXPECT_EQ(request.prompts[0], bundle_->tokenizer->encode("Hello", true, true));
}

TEST_F(ServerRequestTest, CompletionsDefaultTo16TokensAndChatToTheContext) {
    EXPECT_EQ(completions({{"prompt", "Hi"}}).params.max_tokens, 16);
    const json messages = json::array({{{"role", "user"}, {"content", "Hi"}}});
    EXPECT_FALSE(chat({{"messages", messages}}).params.max_tokens.has_value());
    EXPECT_EQ(chat({{"messages", messages}, {"max_completion_tokens", 5}}).params.max_tokens, 5);
}

TEST_F(ServerRequestTest, AcceptsEveryPromptShape) {
    using Prompts = std::vector<std::vector<engine::TokenId>>;
    const std::vector<engine::TokenId> ids = bundle_->tokenizer->encode("Hi there", true, true);
    EXPECT_EQ(completions({{"prompt", "Hi there"}}).prompts, Prompts{ids});
    EXPECT_EQ(completions({{"prompt", {"Hi there", "Hi there"}}}).prompts, (Prompts{ids, ids}));
    EXPECT_EQ(completions({{"prompt", ids}}).prompts, Prompts{ids});
    EXPECT_EQ(completions({{"prompt", {ids, ids}}}).prompts, (Prompts{ids, ids}));
}

TEST_F(ServerRequestTest, ChatAppliesTheTemplateToTextParts) {
    const json parts =
        json::array({{{"type", "text"}, {"text", "Hi "}}, {{"type", "text"}, {"text", "there"}}});
    const CompletionRequest from_parts =
        chat({{"messages", json::array({{{"role", "user"}, {"content", parts}}})}});
    const CompletionRequest from_text =
        chat({{"messages", json::array({{{"role", "user"}, {"content", "Hi there"}}})}});
    EXPECT_EQ(from_parts.prompts, from_text.prompts);
    const std::string text = bundle_->tokenizer->decode(from_text.prompts[0], true);
    EXPECT_NE(text.find("<|im_start|>user\nHi there<|im_end|>"), std::string::npos) << text;
}

TEST_F(ServerRequestTest, ChatLogprobsTakeTopLogprobs) {
    const json messages = json::array({{{"role", "user"}, {"content", "Hi"}}});
    EXPECT_EQ(
        chat({{"messages", messages}, {"logprobs", true}, {"top_logprobs", 3}}).params.logprobs, 3);
    EXPECT_EQ(chat({{"messages", messages}, {"logprobs", true}}).params.logprobs, 0);
    EXPECT_FALSE(chat({{"messages", messages}, {"logprobs", false}}).params.logprobs);
    EXPECT_EQ(
        rejected_param({{"messages", messages}, {"top_logprobs", 3}}, Endpoint::ChatCompletions),
        "top_logprobs");
}

TEST_F(ServerRequestTest, UnknownFieldsAndNullsAreIgnored) {
    const CompletionRequest request = completions({{"prompt", "Hi"},
                                                   {"tools", json::array()},
                                                   {"temperature", nullptr},
                                                   {"suffix", "x"},
                                                   {"stop", nullptr}});
    EXPECT_FLOAT_EQ(request.params.sampling.temperature, 1.0f);
    EXPECT_TRUE(request.params.stop->empty());
}

TEST_F(ServerRequestTest, RejectsBadFieldsNamingThem) {
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"prompt", "x"}, {"max_tokens", 0}}, "max_tokens"},
        {{{"prompt", "x"}, {"max_tokens", -5}}, "max_tokens"},
        {{{"prompt", "x"}, {"max_tokens", 2.5}}, "max_tokens"},
        {{{"prompt", "x"}, {"temperature", 2.01}}, "temperature"},
        {{{"prompt", "x"}, {"temperature", "warm"}}, "temperature"},
        {{{"prompt", "x"}, {"top_p", 0}}, "top_p"},
        {{{"prompt", "x"}, {"top_k", -2}}, "top_k"},
        {{{"prompt", "x"}, {"n", 0}}, "n"},
        {{{"prompt", "x"}, {"n", kMaxChoices + 1}}, "n"},
        {{{"prompt", "x"}, {"logprobs", 6}}, "logprobs"},
        {{{"prompt", "x"}, {"stop", 3}}, "stop"},
        {{{"prompt", "x"}, {"stop", {"a", 1}}}, "stop"},
        {{{"prompt", "x"}, {"logit_bias", {{"abc", 1}}}}, "logit_bias"},
        {{{"prompt", "x"}, {"logit_bias", {{"1", 101}}}}, "logit_bias"},
        {{{"prompt", "x"}, {"logit_bias", {{"99999999", 1}}}}, "logit_bias"},
        {{{"prompt", "x"}, {"stream", 1}}, "stream"},
        {{{"prompt", "x"}, {"stream_options", 1}}, "stream_options"},
        {{{"prompt", "x"}, {"model", 3}}, "model"},
        {{{"prompt", "x"}, {"echo", true}, {"logprobs", 1}}, "echo"},
        {{{"prompt", "x"}, {"stop_token_ids", {-1}}}, "stop_token_ids"},
        {{{"prompt", 5}}, "prompt"},
        {{{"prompt", json::array()}}, "prompt"},
        {{{"prompt", {1, "a"}}}, "prompt"},
        {{{"prompt", {{1}, json::array()}}}, "prompt"},
        {{{"prompt", {-1}}}, "prompt"},
        {{{"prompt", {uint64_t{1} << 63}}}, "prompt"},
        {json::object(), "prompt"},
    };
    for (const auto& [body, param] : cases) {
        EXPECT_EQ(rejected_param(body, Endpoint::Completions), param) << body.dump();
    }
}

TEST_F(ServerRequestTest, RejectsBadMessages) {
    const std::vector<json> cases = {
        json::object(),
        {{"messages", json::array()}},
        {{"messages", "hi"}},
        {{"messages", json::array({{{"content", "hi"}}})}},
        {{"messages", json::array({{{"role", "narrator"}, {"content", "hi"}}})}},
        {{"messages", json::array({{{"role", "user"}, {"content", 1}}})}},
        {{"messages",
          json::array({{{"role", "user"}, {"content", json::array({{{"type", "image_url"}}})}}})}},
    };
    for (const json& body : cases) {
        EXPECT_EQ(rejected_param(body, Endpoint::ChatCompletions), "messages") << body.dump();
    }
}

TEST_F(ServerRequestTest, BoundsEveryListBeforeCopyingIt) {
    const std::string long_stop(engine::kMaxStopStringBytes + 1, 'x');
    const std::vector<std::string> many_stops(engine::kMaxStopStrings + 1, "x");
    std::vector<int> many_ids(engine::kMaxStopTokenIds + 1, 7);
    std::vector<int> huge_ids(100000, 7);
    json many_biases = json::object();
    for (size_t i = 0; i <= engine::kMaxLogitBiasEntries; ++i) many_biases[std::to_string(i)] = 1;
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"prompt", "x"}, {"stop", long_stop}}, "stop"},
        {{{"prompt", "x"}, {"stop", {"ok", long_stop}}}, "stop"},
        {{{"prompt", "x"}, {"stop", std::string(1 << 20, 'x')}}, "stop"},
        {{{"prompt", "x"}, {"stop", many_stops}}, "stop"},
        {{{"prompt", "x"}, {"stop_token_ids", many_ids}}, "stop_token_ids"},
        {{{"prompt", "x"}, {"stop_token_ids", huge_ids}}, "stop_token_ids"},
        {{{"prompt", "x"}, {"stop_token_ids", 7}}, "stop_token_ids"},
        {{{"prompt", "x"}, {"logit_bias", many_biases}}, "logit_bias"},
        {{{"prompt", "x"}, {"cache_salt", ""}}, "cache_salt"},
        {{{"prompt", "x"}, {"cache_salt", 5}}, "cache_salt"},
        {{{"prompt", "x"}, {"cache_salt", std::string(engine::kMaxCacheSaltBytes + 1, 's')}},
         "cache_salt"},
    };
    for (const auto& [body, param] : cases) {
        EXPECT_EQ(rejected_param(body, Endpoint::Completions), param) << body.dump().substr(0, 80);
    }
    // At the bounds, accepted; stop token ids are a set.
    const CompletionRequest at_bounds = completions(
        {{"prompt", "x"},
         {"stop", std::vector<std::string>(engine::kMaxStopStrings,
                                           std::string(engine::kMaxStopStringBytes, 'y'))},
         {"stop_token_ids", {5, 7, 5, 7}}});
    EXPECT_EQ(at_bounds.params.stop->size(), engine::kMaxStopStrings);
    EXPECT_EQ(*at_bounds.params.stop_token_ids, (std::set<engine::TokenId>{5, 7}));
}

TEST_F(ServerRequestTest, BoundsPromptsBeforeTokenizingThem) {
    // No token stands for more than max_token_bytes, so a longer text could
    // not fit the context: refused without being tokenized.
    const size_t limit = max_prompt_bytes(*bundle_, kMaxModelLen);
    ASSERT_EQ(limit, size_t{kMaxModelLen} * static_cast<size_t>(bundle_->max_token_bytes));
    const std::string too_long(limit + 1, 'a');
    EXPECT_EQ(rejected_param({{"prompt", too_long}}, Endpoint::Completions), "prompt");
    EXPECT_EQ(rejected_param({{"prompt", {"ok", too_long}}}, Endpoint::Completions), "prompt");
    const json long_chat =
        json::array({{{"role", "system"}, {"content", too_long.substr(limit / 2)}},
                     {{"role", "user"}, {"content", too_long.substr(limit / 2)}}});
    EXPECT_EQ(rejected_param({{"messages", long_chat}}, Endpoint::ChatCompletions), "messages");
    // Token-id prompts that cannot fit are refused before they are copied.
    const std::vector<int> ids(kMaxModelLen, 7);
    EXPECT_EQ(rejected_param({{"prompt", ids}}, Endpoint::Completions), "prompt");
    EXPECT_EQ(rejected_param({{"prompt", {ids}}}, Endpoint::Completions), "prompt");
    // prompts x n within kMaxEngineRequests, checked before any is tokenized.
    const std::vector<std::string> prompts(kMaxEngineRequests / kMaxChoices + 1, "hi");
    EXPECT_EQ(rejected_param({{"prompt", prompts}, {"n", kMaxChoices}}, Endpoint::Completions),
              "prompt");
    const std::vector<std::string> fitting(kMaxEngineRequests / kMaxChoices, "hi");
    EXPECT_EQ(completions({{"prompt", fitting}, {"n", kMaxChoices}}).prompts.size(),
              fitting.size());
}

TEST_F(ServerRequestTest, ChoicesShareTheirListsAndCarryTheTenantsSalt) {
    CompletionRequest request = completions({{"prompt", {"a", "b"}},
                                             {"n", 3},
                                             {"stop", {"x"}},
                                             {"stop_token_ids", {5}},
                                             {"logit_bias", {{"15", 1}}},
                                             {"cache_salt", "s3cret"}});
    request.tenant = "alice";
    const std::vector<engine::RequestParams> requests = engine_requests(request);
    ASSERT_EQ(requests.size(), 6u);
    for (const engine::RequestParams& params : requests) {
        EXPECT_EQ(&*params.stop, &*requests[0].stop) << "stop strings copied per choice";
        EXPECT_EQ(&*params.stop_token_ids, &*requests[0].stop_token_ids);
        EXPECT_EQ(&*params.logit_bias, &*requests[0].logit_bias);
        EXPECT_EQ(params.cache_salt, engine_cache_salt("alice", "s3cret"));
    }
    // The tenant and the salt are joined so that neither can imitate the other.
    EXPECT_EQ(engine_cache_salt("", ""), "");
    EXPECT_NE(engine_cache_salt("alice", ""), "");
    EXPECT_NE(engine_cache_salt("ab", "c"), engine_cache_salt("a", "bc"));
    EXPECT_NE(engine_cache_salt("", "alice"), engine_cache_salt("alice", ""));
}

TEST_F(ServerRequestTest, BodyMustBeAnObject) {
    for (const json& body : {json::array(), json("text"), json(3)}) {
        EXPECT_THROW(completions(body), ApiError);
    }
}

}  // namespace
}  // namespace ladder::server
