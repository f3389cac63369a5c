// Speculative decoding's part of the engine step, behind one object: before
// scheduling it asks the drafter for the decoding sequences' drafts, as long
// as the policy finds worth it; after scheduling it shows the drafter the
// step's prompt chunks; after verification it records the outcome
// (acceptance histories, the drafter's own state, vLLM's counters); and it
// learns what steps cost. EngineCore calls it at those four points only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ladder/engine/drafter.h"
#include "ladder/engine/engine_config.h"
#include "ladder/engine/scheduler.h"
#include "ladder/engine/spec_decode_stats.h"
#include "ladder/engine/speculation_policy.h"
#include "ladder/engine/speculative_config.h"
#include "ladder/engine/step_cost_model.h"

namespace ladder::model {
class Model;
}
namespace ladder::tokenizer {
class Tokenizer;
}
namespace ladder::util {
class ThreadPool;
}

namespace ladder::engine {

class Speculator {
public:
    Speculator(const SpeculativeConfig& config, std::unique_ptr<Drafter> drafter,
               int32_t max_num_batched_tokens);

    const SpeculativeConfig& config() const { return config_; }

    // Fills the draft of every running sequence that decodes this step (its
    // computed tokens caught up with all but its last), clearing the others.
    void propose(std::span<Sequence* const> running);
    // After scheduling: the drafter follows the step's prompt chunks.
    void scheduled(std::span<const ScheduledChunk> chunks);
    // After verification: sequence.new_tokens hold what it produced from
    // sequence.draft; n_before is its length before them.
    void verified(Sequence& sequence, int32_t n_before);
    // The sequence lost its KV (finished false: preempted) or ended.
    void released(Sequence& sequence, bool finished);
    // The step's target forward pass and sampling.
    void observe_step(StepShape shape, double seconds) { step_cost_.observe(shape, seconds); }

    const SpecDecodeStats& stats() const { return stats_; }
    const StepCostModel& step_cost() const { return step_cost_; }
    const Drafter& drafter() const { return *drafter_; }

private:
    SpeculativeConfig config_;
    std::unique_ptr<Drafter> drafter_;
    int32_t max_num_batched_tokens_;
    SpeculationPolicy policy_;
    StepCostModel step_cost_;
    SpecDecodeStats stats_;
    // Scratch of propose().
    std::vector<Sequence*> decoding_;
    std::vector<DraftCandidate> candidates_;
    std::vector<int32_t> lengths_;
    std::vector<DraftRequest> requests_;
    std::vector<PromptChunk> prompts_;
};

// The speculator the config asks for: its drafter built (a draft model loaded
// and checked against the target's vocabulary). Throws util::InputError.
std::unique_ptr<Speculator> make_speculator(const SpeculativeConfig& config, model::Model& target,
                                            const tokenizer::Tokenizer& tokenizer,
                                            util::ThreadPool& pool, const KvCachePlan& plan,
                                            int32_t max_num_batched_tokens);

}  // namespace ladder::engine
