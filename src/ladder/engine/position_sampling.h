// The one path by which a sequence's next token is chosen, in plain decoding
// and at every drafted position alike: its constraint masks the logits, its
// logit_bias is added, then its sampler chain (penalties, top-k, top-p, min-p,
// temperature, a draw keyed by (seed, position)). The position is the
// sequence's length and the history its tokens, so a caller verifying drafts
// appends each accepted one before sampling the next.
#pragma once

#include <span>

#include "ladder/engine/sequence.h"

namespace ladder::engine {

// The constraint's mask, then logit_bias, applied to logits in place.
void restrict_next_token(Sequence& sequence, std::span<float> logits);

// The token at position sequence.n_tokens() from the model's logits for it
// (changed in place).
TokenId sample_next_token(Sequence& sequence, std::span<float> logits);

// The distribution sample_next_token draws from (Sampler::distribution).
std::span<const TokenProbability> next_token_distribution(Sequence& sequence,
                                                          std::span<float> logits);

}  // namespace ladder::engine
