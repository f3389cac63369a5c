// What `ladder bench` sends and what it measures of one request: the prompt
// (as the OpenAI API's field), and the timings and token counts of its
// stream. Plain records shared by the datasets, the client and the report.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ladder::tools {

enum class BenchEndpoint { Completions, Chat };

// "/v1/completions" or "/v1/chat/completions".
const char* endpoint_path(BenchEndpoint endpoint);

// The sampling every request asks for, as vLLM's bench sets it: greedy
// unless a temperature is given; the others are sent only when set.
struct BenchSampling {
    double temperature = 0.0;
    std::optional<double> top_p;
    std::optional<int64_t> top_k;
    std::optional<double> min_p;
};

struct BenchPrompt {
    // The value of `prompt` (completions: text or token ids) or `messages`
    // (chat), ready to send.
    nlohmann::json payload;
    // Exact for token ids; otherwise an estimate, replaced by the server's
    // usage.prompt_tokens when it reports one.
    int64_t prompt_len = 0;
    int64_t max_tokens = 0;  // sent with ignore_eos, so it is the output length
};

struct RequestResult {
    bool success = false;
    std::string error;            // why it failed; empty on success
    double start_s = 0.0;         // when it was sent, seconds after the run began
    double ttft_s = 0.0;          // to the first chunk with output text
    double e2e_s = 0.0;           // to the end of the stream
    std::vector<double> itls_s;   // gaps between chunks with output text
    int64_t n_stream_tokens = 0;  // chunks with output text: one token each, normally
    std::optional<int64_t> usage_prompt_tokens;
    std::optional<int64_t> usage_completion_tokens;
    std::optional<int64_t> usage_cached_tokens;
    int64_t prompt_len_estimate = 0;

    // The server's counts where it reported them, else what the stream showed.
    int64_t prompt_tokens() const { return usage_prompt_tokens.value_or(prompt_len_estimate); }
    int64_t output_tokens() const { return usage_completion_tokens.value_or(n_stream_tokens); }
    // A stream whose chunk count differs from the usage it reported (a
    // server that merges tokens into one chunk, or drops some).
    bool usage_mismatch() const {
        return usage_completion_tokens.has_value() && *usage_completion_tokens != n_stream_tokens;
    }
};

}  // namespace ladder::tools
