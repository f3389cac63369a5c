// Turns the target model's logits for one sequence's step into its new
// tokens: the drafts it accepts, then a token of its own (the correction of
// the first rejected draft, or a bonus after the last). With no drafts this is
// plain sampling. Lossless: the output is distributed as the target's alone.
// - Point-mass drafts (greedy, n-gram, suffix): a draft is accepted while the
//   token the target samples at its position, with that position's draw, is
//   the draft; so the output is token for token speculation off's.
// - Drafts with a distribution q (a draft model that samples): rejection
//   sampling (Leviathan et al. 2023; Chen et al. 2023): accept with
//   probability min(1, p/q), else draw from norm(max(0, p - q)).
// Every position's p is shaped as without speculation: constraint mask,
// logit_bias, then the sampler chain (position_sampling.h).
#pragma once

#include <cstddef>
#include <span>

#include "ladder/engine/sequence.h"

namespace ladder::engine {

// logits: [sequence.draft.size() + 1, vocab_size]; row i predicts the token
// after draft i - 1 (row 0: after the sequence's last token). Rows are
// changed in place. Fills sequence.new_tokens (at least one, unless the
// constraint refused), new_logprobs (when the request asks for them),
// n_accepted_drafts and constraint_refused; the constraint has accepted the
// new tokens. sequence.tokens is as before.
void verify_step(Sequence& sequence, std::span<float> logits, size_t vocab_size);

}  // namespace ladder::engine
