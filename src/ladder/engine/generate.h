// The generation loop of one session: compute the prompt, then sample a token,
// stream its text and compute it, until end of generation or the token limit.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "ladder/engine/request.h"
#include "ladder/engine/sampler.h"
#include "ladder/engine/session.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::engine {

struct GenerationStats {
    int32_t n_prompt_tokens = 0;
    int32_t n_generated_tokens = 0;
    double prompt_seconds = 0.0;      // computing the prompt (prefill)
    double generation_seconds = 0.0;  // from the first token to the last
    double time_to_first_token = 0.0; // from start to the first sampled token
    FinishReason finish_reason = FinishReason::Length;
};

struct GenerationRequest {
    std::span<const int32_t> prompt;  // appended to what the session already holds
    int32_t max_new_tokens = 128;
    // Called with each complete piece of UTF-8 text as it becomes available.
    std::function<void(std::string_view)> on_text;
    // Set from another thread (Ctrl-C) to stop after the current token.
    const std::atomic<bool>* interrupt = nullptr;
};

// The end-of-generation token, when sampled, is kept in the session (so a chat
// can continue after it) but not streamed as text.
GenerationStats generate(Session& session, Sampler& sampler, const tokenizer::Tokenizer& tokenizer,
                         const GenerationRequest& request);

}  // namespace ladder::engine
