// What a client asks of the engine, and what the engine streams back. The
// server and `ladder generate` map their formats onto these; the engine knows
// nothing of HTTP or JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ladder/engine/sampling_params.h"
#include "ladder/engine/token_constraint.h"
#include "ladder/tokenizer/vocabulary.h"

namespace ladder::engine {

using TokenId = tokenizer::TokenId;

// Requests are numbered by the engine; the type keeps them apart from tokens
// and blocks.
enum class RequestId : uint64_t {};

struct RequestParams {
    std::vector<TokenId> prompt;  // already tokenized (chat template applied)
    SamplingParams sampling;
    // Tokens to generate at most; unset: up to the context limit.
    std::optional<int32_t> max_tokens;
    std::vector<std::string> stop;        // stop strings, never returned as text
    std::vector<TokenId> stop_token_ids;  // stop tokens besides end-of-generation
    bool ignore_eos = false;              // benchmarks: always generate max_tokens
    // Log-probabilities of each generated token: nullopt = none; n = the
    // sampled token's and the n most likely alternatives.
    std::optional<int32_t> logprobs;
    std::vector<std::pair<TokenId, float>> logit_bias;  // added to the logits before sampling
    // Builds the restriction on every next token (a grammar); empty: none.
    // Each choice of a request builds its own.
    std::function<std::unique_ptr<TokenConstraint>()> make_constraint;
};

enum class FinishReason { Stop, Length, Abort };

const char* finish_reason_name(FinishReason reason);

struct TokenLogprob {
    TokenId id = 0;
    float logprob = 0.0f;
    std::vector<std::pair<TokenId, float>> top;  // most likely first
};

// Seconds on the steady clock (util::now_seconds); 0 = not reached.
struct RequestTimings {
    double arrival = 0.0;
    double first_scheduled = 0.0;
    double first_token = 0.0;
    double finished = 0.0;
};

// One step's news for one request. The last output of a request carries its
// finish reason; after it nothing more comes.
struct RequestOutput {
    RequestId id{};
    std::vector<TokenId> token_ids;      // new this step
    std::string text;                    // new text this step (whole UTF-8 characters)
    std::vector<TokenLogprob> logprobs;  // one per new token, when asked for
    std::optional<FinishReason> finish_reason;
    double time = 0.0;  // when this step's tokens were made
    int32_t n_prompt_tokens = 0;
    int32_t n_generated_tokens = 0;      // so far, this step's included
    int32_t n_cached_prompt_tokens = 0;  // prompt tokens whose KV was reused
    int32_t n_preemptions = 0;           // times the request lost its KV and was recomputed
    RequestTimings timings;

    bool finished() const { return finish_reason.has_value(); }
};

}  // namespace ladder::engine
