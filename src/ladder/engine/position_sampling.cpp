#include "ladder/engine/position_sampling.h"

namespace ladder::engine {

void restrict_next_token(Sequence& sequence, std::span<float> logits) {
    if (sequence.constraint) sequence.constraint->apply_mask(logits);
    for (const auto& [id, bias] : *sequence.params.logit_bias) logits[static_cast<size_t>(id)] += bias;
}

TokenId sample_next_token(Sequence& sequence, std::span<float> logits) {
    restrict_next_token(sequence, logits);
    // The penalties see the prompt too, as in llama.cpp and vLLM.
    return sequence.sampler.sample(logits, sequence.tokens, sequence.n_tokens());
}

std::span<const TokenProbability> next_token_distribution(Sequence& sequence,
                                                          std::span<float> logits) {
    restrict_next_token(sequence, logits);
    return sequence.sampler.distribution(logits, sequence.tokens);
}

}  // namespace ladder::engine
