// Picks the next token of one sequence from its logits, in llama.cpp's default
// order: penalties, top-k, top-p, min-p, temperature, then a draw keyed by
// (seed, position). Also the distribution that draw is made from (rejection
// sampling compares two of them) and the log-probabilities OpenAI's logprobs
// report. Knows nothing of batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ladder/engine/position_random.h"
#include "ladder/engine/sampling_params.h"
#include "ladder/engine/vocab_weights.h"
#include "ladder/tokenizer/vocabulary.h"

namespace ladder::engine {

using TokenId = tokenizer::TokenId;

// A token and its probability under a shaped distribution.
struct TokenProbability {
    TokenId id;
    double probability;
};

// One sampler per sequence. Its draws are a function of the seed and the
// position drawn for (position_random.h), never of how many draws came
// before, so the same seed gives the same tokens whatever else runs, after a
// preemption, and under speculative decoding. Not thread-safe (scratch).
class Sampler {
public:
    // Throws util::InputError for parameters outside their ranges (see
    // validate). Without a seed, one is taken from std::random_device.
    explicit Sampler(const SamplingParams& params);

    // The token at `position` (its index in the sequence). logits: [vocab_size],
    // the model's prediction for that position; they are penalized in place.
    // history: the sequence before it (prompt and generated tokens), every id
    // in [0, vocab_size). temperature 0 gives the penalized argmax, the lowest
    // id winning ties. Allocates only the first time (buffers are reused).
    TokenId sample(std::span<float> logits, std::span<const TokenId> history, int64_t position);

    // What sample() would draw from, without drawing: the candidates left by
    // the chain, with probabilities summing to 1, in the fixed order the draw
    // walks. Greedy: the argmax alone. Valid until the next call.
    std::span<const TokenProbability> distribution(std::span<float> logits,
                                                   std::span<const TokenId> history);

    // The number this sequence draws at `position` for `purpose`.
    double uniform(int64_t position, DrawPurpose purpose) const {
        return position_uniform(seed_, position, purpose);
    }

    // The penalty step of sample(), on its own: for each distinct token among
    // the last penalty_last_n of history, seen count times,
    //   logit = logit > 0 ? logit / repetition_penalty : logit * repetition_penalty
    //   logit -= count * frequency_penalty + presence_penalty
    void apply_penalties(std::span<float> logits, std::span<const TokenId> history);

    const SamplingParams& params() const { return params_; }
    uint64_t seed() const { return seed_; }

private:
    struct Candidate {
        // Left uninitialized by default: candidates_ regrows to the whole
        // vocabulary on every call after a filter shrank it, and is written
        // over at once (zeroing 262k of them first cost a fifth of a draw).
        Candidate() {}  // NOLINT(modernize-use-equals-default): = default would zero them
        Candidate(TokenId id, float logit) : id(id), logit(logit) {}
        TokenId id;
        float logit;
    };
    struct Weighted {
        Candidate candidate;
        double weight;  // exp(logit - max logit)
    };
    // A lambda, not a function, so that the vocabulary passes inline it.
    static constexpr auto logit_of = [](const Candidate& c) { return c.logit; };

    // Penalties and filters: candidates_ holds what is left, with their
    // logits (the temperature divides them as they are weighed). Returns the
    // argmax instead (and leaves candidates_ alone) when greedy.
    std::optional<TokenId> shape(std::span<float> logits, std::span<const TokenId> history);
    float max_candidate_logit() const;
    // Keeps the smallest set of top-ranked candidates whose probability reaches top_p.
    void keep_top_p();
    Candidate find_top_p_cutoff(double target);
    void keep_min_p();
    // Fills weights_ with exp((logit - max) / temperature) of every candidate
    // and weight_sums_ with their running sums; returns their sum.
    double weigh_candidates();
    // weights_[i] = exp((logit - max_logit) / temperature) of candidate i; all
    // 0 when max_logit is not finite.
    void fill_weights(float max_logit, float temperature);
    TokenId draw(double uniform);

    SamplingParams params_;
    uint64_t seed_;
    // Scratch reused across calls. candidates_ holds the tokens still in the
    // running, always in an order fixed by (logit, id): id order, or rank order
    // after top-k.
    std::vector<Candidate> candidates_;
    std::vector<Weighted> selection_;
    std::vector<double> bucket_mass_;
    std::vector<int32_t> buckets_;  // keep_top_p: each candidate's bucket
    std::vector<float> weights_;
    WeightSums weight_sums_;
    std::vector<TokenId> window_;  // scratch: the penalized window of history, sorted
    std::vector<TokenProbability> distribution_;
};

// Inverse-CDF draw from a distribution, walking it in the order given:
// the first token whose cumulative probability passes uniform * total.
TokenId draw_from(std::span<const TokenProbability> distribution, double uniform);

// log softmax(logits)[id]: the model's log-probability of one token.
float logprob_of(std::span<const float> logits, TokenId id);
// The n most likely tokens and their log-probabilities, most likely first (the
// lowest id first among equals). n is clamped to [0, vocab_size].
std::vector<std::pair<TokenId, float>> top_logprobs(std::span<const float> logits, int n);

}  // namespace ladder::engine
