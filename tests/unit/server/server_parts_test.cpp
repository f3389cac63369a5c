// The server's small parts that need no engine: API keys and tenants, model
// names, queue defaults, Prometheus histograms and metrics text, logprobs
// shapes, stream chunks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ladder/server/api_error.h"
#include "ladder/server/auth.h"
#include "ladder/server/histogram.h"
#include "ladder/server/response_format.h"
#include "ladder/server/server_config.h"
#include "ladder/server/server_metrics.h"

namespace ladder::server {
namespace {

TEST(ServerAuth, MatchesOnlyTheSameBytes) {
    EXPECT_TRUE(constant_time_equal("secret-key", "secret-key"));
    EXPECT_FALSE(constant_time_equal("secret-kez", "secret-key"));
    EXPECT_FALSE(constant_time_equal("secret-ke", "secret-key"));
    EXPECT_FALSE(constant_time_equal("secret-key2", "secret-key"));
    EXPECT_FALSE(constant_time_equal("", "secret-key"));
    EXPECT_FALSE(constant_time_equal(std::string("secret-key\0", 11), "secret-key"));
    EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(ServerAuth, RequiresABearerKeyWhenTheServerHasKeys) {
    const std::vector<ApiKey> keys{{"k1", "alice"}, {"k2", "bob"}, {"k3", "alice"}};
    EXPECT_EQ(authenticate({}, ""), "") << "no keys: everyone is the one anonymous tenant";
    EXPECT_EQ(authenticate(keys, "Bearer k1"), "alice");
    EXPECT_EQ(authenticate(keys, "Bearer k2"), "bob");
    EXPECT_EQ(authenticate(keys, "Bearer k3"), "alice") << "keys with one name are one tenant";
    for (const char* header :
         {"", "Bearer", "Bearer ", "Bearer k4", "Bearer k1x", "Basic k1", "k1", "Bearerk1"}) {
        try {
            authenticate(keys, header);
            ADD_FAILURE() << "accepted '" << header << "'";
        } catch (const ApiError& error) {
            EXPECT_EQ(error.status(), 401) << header;
            EXPECT_EQ(error.code(), "invalid_api_key") << header;
        }
    }
}

TEST(ServerAuth, TheBearerSchemeIsMatchedInAnyCase) {
    const std::vector<ApiKey> keys{{"Secret-Key", "t"}};
    for (const char* header : {"Bearer Secret-Key", "bearer Secret-Key", "BEARER Secret-Key",
                               "bEaReR  Secret-Key", "Bearer\tSecret-Key "}) {
        EXPECT_EQ(authenticate(keys, header), "t") << header;
    }
    // The key itself is compared exactly.
    EXPECT_THROW(authenticate(keys, "Bearer secret-key"), ApiError);
}

class ApiKeyFile : public ::testing::Test {
protected:
    void TearDown() override { std::filesystem::remove(path_); }
    std::string write(const std::string& text) {
        std::ofstream(path_) << text;
        return path_.string();
    }
    std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                  ("ladder-keys-" + std::to_string(::getpid()) + ".txt");
};

TEST_F(ApiKeyFile, OneKeyALineWithAnOptionalName) {
    const std::vector<ApiKey> keys =
        read_api_key_file(write("# tenants of the staging server\n"
                                "sk-alice-1  alice\n"
                                "\n"
                                "sk-bob\tBob Smith \n"
                                "sk-anonymous\n"
                                "   sk-alice-2 alice\r\n"));
    ASSERT_EQ(keys.size(), 4u);
    EXPECT_EQ(keys[0].key, "sk-alice-1");
    EXPECT_EQ(keys[0].tenant, "alice");
    EXPECT_EQ(keys[1].key, "sk-bob");
    EXPECT_EQ(keys[1].tenant, "Bob Smith");
    EXPECT_EQ(keys[2].key, "sk-anonymous");
    EXPECT_EQ(keys[2].tenant, "sk-anonymous") << "an unnamed key is a tenant of its own";
    EXPECT_EQ(keys[3].key, "sk-alice-2");
    EXPECT_EQ(keys[3].tenant, "alice");
}

TEST_F(ApiKeyFile, RefusesARepeatedKeyAndAFileWithoutKeys) {
    EXPECT_THROW(read_api_key_file(write("k1 a\nk1 b\n")), util::InputError);
    EXPECT_THROW(read_api_key_file(write("# nothing\n\n")), util::InputError);
    EXPECT_THROW(read_api_key_file((path_.string() + ".missing")), util::InputError);
}

TEST(ServerModelName, TakesTheServedNameTheFileNameOrNone) {
    ServerConfig config;
    config.served_model_name = "smol";
    config.model_file_name = "SmolLM2.Q4_1.gguf";
    EXPECT_TRUE(accepts_model_name(config, ""));
    EXPECT_TRUE(accepts_model_name(config, "smol"));
    EXPECT_TRUE(accepts_model_name(config, "SmolLM2.Q4_1.gguf"));
    EXPECT_TRUE(accepts_model_name(config, "SmolLM2.Q4_1"));
    EXPECT_FALSE(accepts_model_name(config, "gpt-4"));
    EXPECT_FALSE(accepts_model_name(config, "SmolLM2"));
    EXPECT_FALSE(accepts_model_name(config, "Smol"));
}

TEST(ServerMaxQueue, DefaultsToFourStepsOfSequences) {
    EXPECT_EQ(default_max_queue(256), 1024);
    EXPECT_EQ(default_max_queue(8), 32);
}

TEST(ServerHttpThreads, OnePerCoreAndAtLeastTwo) {
    EXPECT_EQ(handler_threads_for(0), 2);
    EXPECT_EQ(handler_threads_for(1), 2);
    EXPECT_EQ(handler_threads_for(16), 16);
}

// Only what ChunkRenderer reads of a format: the chunks' object name.
class ChunkObjectFormat final : public ResponseFormat {
public:
    const char* id_prefix() const override { return "cmpl-"; }
    const char* object() const override { return "text_completion"; }
    const char* chunk_object() const override { return "chat.completion.chunk"; }
    nlohmann::json response_choice(int32_t, const ChoiceState&,
                                   const tokenizer::Tokenizer&) const override {
        return nullptr;
    }
    std::optional<nlohmann::json> opening_choice(int32_t, const ChoiceState&) const override {
        return std::nullopt;
    }
    std::optional<nlohmann::json> chunk_choice(const ChoiceOutput&, const tokenizer::Tokenizer&,
                                               size_t&) const override {
        return std::nullopt;
    }
};

// The SSE event's JSON, checked to be one `data: ...\n\n` event.
nlohmann::json event_data(const std::string& event) {
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    EXPECT_TRUE(event.ends_with("\n\n")) << event;
    EXPECT_EQ(event.find('\n'), event.size() - 2) << "one line: " << event;
    return nlohmann::json::parse(event.substr(6));
}

TEST(ServerChunkRenderer, EveryChunkCarriesTheEnvelopeEscapedAndUsageOnlyWhenAsked) {
    const ChunkObjectFormat format;
    const ResponseMeta meta{"chatcmpl-\"quoted\"\\id", 1765000000, "model \"name\"\n"};
    const nlohmann::json choice = {{"index", 0}, {"delta", {{"content", "Hi \"there\"\n"}}}};
    for (const bool include_usage : {false, true}) {
        const ChunkRenderer renderer(meta, format, include_usage);
        std::string events;
        renderer.append_choice(events, choice);
        const nlohmann::json chunk = event_data(events);
        EXPECT_EQ(chunk["id"], meta.id);
        EXPECT_EQ(chunk["object"], "chat.completion.chunk");
        EXPECT_EQ(chunk["created"], meta.created);
        EXPECT_EQ(chunk["model"], meta.model);
        EXPECT_EQ(chunk["choices"], nlohmann::json::array({choice}));
        EXPECT_EQ(chunk.contains("usage"), include_usage);
        if (include_usage) {
            EXPECT_TRUE(chunk["usage"].is_null());
        }
    }
    const ChunkRenderer renderer(meta, format, true);
    std::string events = "before";
    const nlohmann::json usage = {{"prompt_tokens", 5}, {"completion_tokens", 2}};
    renderer.append_usage(events, usage);
    ASSERT_EQ(events.rfind("before", 0), 0u) << "appends";
    const nlohmann::json last = event_data(events.substr(6));
    EXPECT_EQ(last["id"], meta.id);
    EXPECT_EQ(last["choices"], nlohmann::json::array());
    EXPECT_EQ(last["usage"], usage);
}

TEST(ServerHistogram, CountsCumulativelyWithValuesOnABoundInItsBucket) {
    Histogram histogram({0.1, 1.0});
    for (double value : {0.05, 0.1, 0.5, 2.0}) histogram.observe(value);
    std::string out;
    histogram.render(out, "x_seconds", "help text", "model_name=\"m\"");
    EXPECT_NE(out.find("# TYPE x_seconds histogram\n"), std::string::npos) << out;
    EXPECT_NE(out.find("x_seconds_bucket{model_name=\"m\",le=\"0.1\"} 2\n"), std::string::npos)
        << out;
    EXPECT_NE(out.find("x_seconds_bucket{model_name=\"m\",le=\"1\"} 3\n"), std::string::npos)
        << out;
    EXPECT_NE(out.find("x_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 4\n"), std::string::npos)
        << out;
    EXPECT_NE(out.find("x_seconds_count{model_name=\"m\"} 4\n"), std::string::npos) << out;
    EXPECT_NE(out.find("x_seconds_sum{model_name=\"m\"} 2.65\n"), std::string::npos) << out;
}

TEST(ServerMetricsText, RecordsAFinishedRequestUnderVllmNames) {
    ServerMetrics metrics;
    engine::RequestOutput last;
    last.finish_reason = engine::FinishReason::Length;
    last.n_prompt_tokens = 10;
    last.n_generated_tokens = 5;
    last.n_cached_prompt_tokens = 4;
    last.timings = {
        .arrival = 100.0, .first_scheduled = 100.5, .first_token = 101.0, .finished = 103.0};
    metrics.record_finished(last);
    engine::EngineStats stats;
    stats.n_blocks = 8;
    stats.n_blocks_used = 2;
    stats.n_running = 1;
    stats.n_prefix_queried_tokens = 10;
    stats.n_prefix_hit_tokens = 4;
    const std::string text = metrics.render(stats, "m\"x");
    const std::string labels = "model_name=\"m\\\"x\"";
    for (const std::string& line : {
             "ladder:num_requests_running{" + labels + "} 1\n",
             "ladder:kv_cache_usage_perc{" + labels + "} 0.25\n",
             "ladder:kv_cache_blocks_total{" + labels + "} 8\n",
             "ladder:prefix_cache_queries_total{" + labels + "} 10\n",
             "ladder:prefix_cache_hits_total{" + labels + "} 4\n",
             "ladder:request_success_total{" + labels + ",finished_reason=\"length\"} 1\n",
             "ladder:request_success_total{" + labels + ",finished_reason=\"abort\"} 0\n",
             "ladder:time_to_first_token_seconds_sum{" + labels + "} 1\n",
             "ladder:time_per_output_token_seconds_sum{" + labels + "} 0.5\n",
             "ladder:e2e_request_latency_seconds_sum{" + labels + "} 3\n",
             "ladder:request_queue_time_seconds_sum{" + labels + "} 0.5\n",
         }) {
        EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << text;
    }
}

}  // namespace
}  // namespace ladder::server
