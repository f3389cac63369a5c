// How many tokens each decoding sequence drafts in a step. A drafted token
// costs a row of the target's forward pass (and, with a draft model, part of
// a draft step); it pays only if the tokens it is expected to add raise the
// step's tokens per second. At small batch a row is cheap beside the fixed
// cost of reading the weights, so even a modest acceptance pays; as the
// batch grows the step becomes compute-bound, a row costs about what a token
// is worth, and drafting turns itself down to nothing. Costs come from
// StepCostModel (measured), acceptance from each sequence's history.
#pragma once

#include <cstdint>
#include <span>

#include "ladder/engine/draft.h"
#include "ladder/engine/sequence.h"
#include "ladder/engine/step_cost_model.h"

namespace ladder::engine {

// One decoding sequence as the policy sees it.
struct DraftCandidate {
    double acceptance = 0.0;  // estimated chance that each drafted token is accepted
    double n_context = 0.0;   // positions its rows attend to
    int32_t max_tokens = 0;   // drafts it may take at most (remaining output, the config)
};

class SpeculationPolicy {
public:
    // margin: how much more than its cost a drafted token must be expected
    // to return, covering the error of the estimates.
    explicit SpeculationPolicy(double margin = 0.25) : margin_(margin) {}

    // Chooses lengths[i] for candidates[i] in a step that already computes
    // base (the decodes' own rows and any prompt chunks) producing
    // n_base_tokens tokens. draft_steps: the drafter runs one step of a model
    // per drafted depth (draft_model), costed by draft_cost.
    void plan(std::span<const DraftCandidate> candidates, StepShape base, double n_base_tokens,
              const StepCostModel& target_cost, const StepCostModel* draft_cost,
              std::span<int32_t> lengths) const;

    // The acceptance estimate of a history: decayed accepted over decayed
    // trials, pulled towards a prior so that one bad draft does not end
    // speculation for good and an idle sequence is tried again.
    static double acceptance(const AcceptanceHistory& history);
    // After a verification of n_drafted drafts of which n_accepted were taken.
    static void record(AcceptanceHistory& history, int32_t n_drafted, int32_t n_accepted);
    // After a step in which the sequence drafted nothing.
    static void record_idle(AcceptanceHistory& history);

private:
    void plan_per_sequence(std::span<const DraftCandidate> candidates, StepShape base,
                           double n_base_tokens, const StepCostModel& target_cost,
                           std::span<int32_t> lengths) const;
    void plan_per_depth(std::span<const DraftCandidate> candidates, StepShape base,
                        double n_base_tokens, const StepCostModel& target_cost,
                        const StepCostModel& draft_cost, std::span<int32_t> lengths) const;

    double margin_;
};

}  // namespace ladder::engine
