// Token log-probabilities in the two shapes OpenAI uses: the legacy
// completions one ({tokens, token_logprobs, top_logprobs, text_offset}) and
// the chat one ({content: [{token, logprob, bytes, top_logprobs}]}).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

#include "ladder/engine/request.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::server {

// text_offset: where the first token's text starts in the choice's text; it
// is advanced past these tokens, so a stream's chunks continue the count.
nlohmann::json completion_logprobs_json(std::span<const engine::TokenLogprob> logprobs,
                                        const tokenizer::Tokenizer& tokenizer, size_t& text_offset);

nlohmann::json chat_logprobs_json(std::span<const engine::TokenLogprob> logprobs,
                                  const tokenizer::Tokenizer& tokenizer);

}  // namespace ladder::server
