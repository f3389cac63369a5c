// The one interface every way of guessing a sequence's next tokens sits
// behind (n-gram prompt lookup, a suffix index over earlier requests, a draft
// model). A drafter proposes; the engine verifies (verifier.h) and tells the
// drafter what became of the proposal.
#pragma once

#include <cstdint>
#include <span>

#include "ladder/engine/sequence.h"
#include "ladder/engine/step_cost_model.h"

namespace ladder::engine {

// One sequence to draft for in a step: at most max_tokens, written to
// sequence->draft (which is empty on entry).
struct DraftRequest {
    Sequence* sequence;
    int32_t max_tokens;
};

// Prompt rows the target computes for a sequence in this step.
struct PromptChunk {
    Sequence* sequence;
    int32_t n_rows;
};

class Drafter {
public:
    virtual ~Drafter() = default;

    // After scheduling: the prompt chunks the step computes. A drafter with
    // a model of its own computes them too, so that its prompt pass counts
    // towards the time to first token instead of stalling the first decode
    // steps.
    virtual void follow_prompts(std::span<const PromptChunk> chunks) { (void)chunks; }

    // Proposes for every request at once (a draft model batches them). A
    // drafter may propose fewer tokens than asked, or none.
    virtual void propose(std::span<const DraftRequest> requests) = 0;

    // After verification: of the n_drafted tokens proposed for the sequence,
    // the first n_accepted became its tokens at positions n_before.. (its
    // length before the step), and the target added one more of its own.
    virtual void on_verified(const Sequence& sequence, int32_t n_before, int32_t n_drafted,
                             int32_t n_accepted) {
        (void)sequence;
        (void)n_before;
        (void)n_drafted;
        (void)n_accepted;
    }

    // The sequence gave back its KV: preempted (finished false: it will be
    // recomputed, tokens kept) or ended (finished true: its tokens are final).
    virtual void on_released(const Sequence& sequence, bool finished) {
        (void)sequence;
        (void)finished;
    }

    // True when proposals carry the distributions they were drawn from, so
    // that sampled requests are verified by rejection sampling.
    virtual bool proposes_distributions() const { return false; }

    // What one of the drafter's own forward steps costs, when it runs a model
    // step per drafted depth (a draft model); null when drafting is free.
    virtual const StepCostModel* step_cost() const { return nullptr; }
};

}  // namespace ladder::engine
