// Picks the next token of one sequence from its logits, in llama.cpp's default
// order: penalties, top-k, top-p, min-p, temperature, then a seeded draw. Also
// the log-probabilities OpenAI's logprobs report. Knows nothing of batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "ladder/engine/sampling_params.h"
#include "ladder/tokenizer/vocabulary.h"

namespace ladder::engine {

using TokenId = tokenizer::TokenId;

// One sampler per sequence: it holds the sequence's random stream, so the same
// seed gives the same tokens whatever else runs. Not thread-safe.
class Sampler {
public:
    // Throws util::InputError for parameters outside their ranges (see validate).
    explicit Sampler(const SamplingParams& params);

    // logits: [vocab_size] of the last position; they are penalized in place.
    // history: the sequence so far (prompt and generated tokens), every id in
    // [0, vocab_size). temperature 0 gives the penalized argmax, the lowest id
    // winning ties. Allocates only the first time (buffers are reused).
    TokenId sample(std::span<float> logits, std::span<const TokenId> history);

    // The penalty step of sample(), on its own: for each distinct token among
    // the last penalty_last_n of history, seen count times,
    //   logit = logit > 0 ? logit / repetition_penalty : logit * repetition_penalty
    //   logit -= count * frequency_penalty + presence_penalty
    void apply_penalties(std::span<float> logits, std::span<const TokenId> history);

    const SamplingParams& params() const { return params_; }

private:
    struct Candidate {
        TokenId id;
        float logit;
    };
    struct Weighted {
        Candidate candidate;
        double weight;  // exp(logit - max logit)
    };

    float max_candidate_logit() const;
    // Keeps the smallest set of top-ranked candidates whose probability reaches top_p.
    void keep_top_p();
    Candidate find_top_p_cutoff(double target);
    void keep_min_p();
    TokenId draw();
    // Uniform in [0, 1) from the top 53 bits of the generator, the same on every
    // standard library (std::uniform_real_distribution is implementation-defined).
    double next_uniform();

    SamplingParams params_;
    std::mt19937_64 rng_;
    // Scratch reused across calls. candidates_ holds the tokens still in the
    // running, always in an order fixed by (logit, id): id order, or rank order
    // after top-k.
    std::vector<Candidate> candidates_;
    std::vector<Weighted> selection_;
    std::vector<double> bucket_mass_;
    std::vector<double> weights_;
    std::vector<TokenId> window_;  // scratch: the penalized window of history, sorted
};

// log softmax(logits)[id]: the model's log-probability of one token.
float logprob_of(std::span<const float> logits, TokenId id);
// The n most likely tokens and their log-probabilities, most likely first (the
// lowest id first among equals). n is clamped to [0, vocab_size].
std::vector<std::pair<TokenId, float>> top_logprobs(std::span<const float> logits, int n);

}  // namespace ladder::engine
