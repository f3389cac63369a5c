// The server's small parts that need no engine: key comparison, model
// names, Prometheus histograms and metrics text, logprobs shapes.
#include <gtest/gtest.h>

#include "ladder/server/api_error.h"
#include "ladder/server/auth.h"
#include "ladder/server/histogram.h"
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

TEST(ServerAuth, RequiresTheBearerKeyWhenOneIsSet) {
    HttpRequest request;
    EXPECT_NO_THROW(require_api_key(request, ""));
    EXPECT_THROW(require_api_key(request, "k1"), ApiError);
    request.set_header("Authorization", "Bearer k1");
    EXPECT_NO_THROW(require_api_key(request, "k1"));
    EXPECT_THROW(require_api_key(request, "k2"), ApiError);
    HttpRequest basic;
    basic.set_header("Authorization", "Basic k1");
    try {
        require_api_key(basic, "k1");
        ADD_FAILURE() << "a Basic header was accepted";
    } catch (const ApiError& error) {
        EXPECT_EQ(error.status(), 401);
        EXPECT_EQ(error.code(), "invalid_api_key");
    }
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

TEST(ServerHttpThreads, OnePerCoreAndAtLeastTwo) {
    EXPECT_EQ(handler_threads_for(0), 2);
    EXPECT_EQ(handler_threads_for(1), 2);
    EXPECT_EQ(handler_threads_for(16), 16);
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
