// What a client asks of the engine, and what the engine streams back. The
// server and `ladder generate` map their formats onto these; the engine knows
// nothing of HTTP or JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ladder/engine/sampling_params.h"
#include "ladder/engine/stop_matcher.h"
#include "ladder/engine/token_constraint.h"
#include "ladder/tokenizer/vocabulary.h"
#include "ladder/util/shared_value.h"

namespace ladder::engine {

using TokenId = tokenizer::TokenId;

// Requests are numbered by the engine; the type keeps them apart from tokens
// and blocks.
enum class RequestId : uint64_t {};

// Bounds on what one request may ask for, so that no request can make the
// engine's step slow or its memory large for everyone else. The engine
// refuses a request past them; the server names the field in its 400.
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopStringBytes = 1024;
inline constexpr size_t kMaxStopTokenIds = 64;
inline constexpr size_t kMaxLogitBiasEntries = 1024;
inline constexpr size_t kMaxCacheSaltBytes = 1024;

using LogitBias = std::vector<std::pair<TokenId, float>>;

// The list-valued fields are util::Shared: the choices of one API request
// (copies of one RequestParams) share them, read-only, instead of copying.
struct RequestParams {
    std::vector<TokenId> prompt;  // already tokenized (chat template applied)
    SamplingParams sampling;
    // Tokens to generate at most; unset: up to the context limit.
    std::optional<int32_t> max_tokens;
    util::Shared<StopStrings> stop;                  // stop strings, never returned as text
    util::Shared<std::set<TokenId>> stop_token_ids;  // stop tokens besides end-of-generation
    bool ignore_eos = false;                         // benchmarks: always generate max_tokens
    // Log-probabilities of each generated token: nullopt = none; n = the
    // sampled token's and the n most likely alternatives.
    std::optional<int32_t> logprobs;
    util::Shared<LogitBias> logit_bias;  // added to the logits before sampling
    // Who may share this request's cached prefix: requests share cached KV
    // blocks only when their salts are equal (empty: the common, unsalted
    // cache). The server puts the caller's tenant and vLLM's `cache_salt`
    // here, so one tenant's prompts never count as another's cache hits.
    std::string cache_salt;
    // Builds the restriction on every next token (a grammar); empty: none.
    // Each choice of a request builds its own.
    std::function<std::unique_ptr<TokenConstraint>()> make_constraint;
};

// Error: something failed while the engine handled this request (a failed
// allocation); the request ended, the others go on.
enum class FinishReason { Stop, Length, Abort, Error };

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
    std::string error;  // what went wrong, with FinishReason::Error

    bool finished() const { return finish_reason.has_value(); }
};

}  // namespace ladder::engine
