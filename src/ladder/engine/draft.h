// What a drafter proposes for one sequence in one step, and how well its
// proposals have fared: plain data on the Sequence, read by the scheduler
// (drafted tokens take budget and KV), the verifier and the speculation policy.
#pragma once

#include <cstdint>
#include <vector>

#include "ladder/engine/sampler.h"

namespace ladder::engine {

struct DraftProposal {
    // The proposed continuation of the sequence, in order.
    std::vector<TokenId> tokens;
    // With a draft model that samples: for each token, the draft's shaped
    // distribution q it was drawn from, sorted by id (rejection sampling
    // reads q(x) by binary search). Empty: each token is a point mass.
    std::vector<std::vector<TokenProbability>> distributions;

    int32_t size() const { return static_cast<int32_t>(tokens.size()); }
    bool empty() const { return tokens.empty(); }
    void clear() { truncate(0); }
    // Keeps the first n (the scheduler's budget may take fewer).
    void truncate(int32_t n) {
        if (n >= size()) return;
        tokens.resize(static_cast<size_t>(n));
        if (distributions.size() > static_cast<size_t>(n))
            distributions.resize(static_cast<size_t>(n));
    }
};

// How many drafted tokens the target accepted, decayed over steps so that the
// estimate follows a sequence whose text changes character (a quote ends).
struct AcceptanceHistory {
    double accepted = 0.0;  // decayed count of accepted drafts
    double trials = 0.0;    // decayed count of drafts that were tested (accepted + first rejected)
    int32_t n_steps_idle = 0;  // steps since the last draft
};

}  // namespace ladder::engine
