// Many requests through the engine at once, to the end: vLLM's LLM.generate.
// What `ladder generate` runs, on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ladder/engine/engine_core.h"
#include "ladder/engine/request.h"

namespace ladder::engine {

struct BatchResult {
    std::vector<TokenId> token_ids;
    std::string text;
    std::vector<TokenLogprob> logprobs;
    FinishReason finish_reason = FinishReason::Abort;
    std::string error;  // with FinishReason::Error: what went wrong
    int32_t n_prompt_tokens = 0;
    int32_t n_cached_prompt_tokens = 0;
    int32_t n_preemptions = 0;
    RequestTimings timings;
    double last_token_time = 0.0;  // for the time per output token
};

// KV memory at the step that held the most blocks: the slots those blocks
// reserve against the tokens live sequences kept in them.
struct KvPeak {
    int32_t n_blocks_used = 0;
    int64_t n_slots = 0;      // blocks x block size
    int64_t n_kv_tokens = 0;  // tokens computed into the cache by live sequences
};

// Called after every step with the requests finished so far.
using BatchProgress = std::function<void(int64_t n_finished, int64_t n_total)>;

// Submits every request, steps until all are done, and returns the results in
// input order. Throws util::InputError (before anything runs) for a request
// that cannot run, naming its index.
std::vector<BatchResult> run_batch(EngineCore& core, std::vector<RequestParams> requests,
                                   const BatchProgress& progress = {}, KvPeak* kv_peak = nullptr);

}  // namespace ladder::engine
