#include "ladder/engine/speculation_policy.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ladder::engine {

namespace {

// The prior acceptance and its weight in drafts: what a sequence is assumed
// to accept before it has drafted, and where an idle one drifts back to.
constexpr double kPriorAcceptance = 0.6;
constexpr double kPriorWeight = 1.0;
// Per verification, older outcomes count this much less; per idle step, a
// little less again, so that a sequence that stopped drafting tries again.
constexpr double kDecay = 0.8;
constexpr double kIdleDecay = 0.97;

struct Item {
    double value_per_second;
    double gain;     // expected tokens
    double seconds;  // what the row costs
    size_t sequence;
    int32_t depth;  // 1-based
};

}  // namespace

double SpeculationPolicy::acceptance(const AcceptanceHistory& history) {
    return (history.accepted + kPriorAcceptance * kPriorWeight) / (history.trials + kPriorWeight);
}

void SpeculationPolicy::record(AcceptanceHistory& history, int32_t n_drafted, int32_t n_accepted) {
    history.accepted = kDecay * history.accepted + n_accepted;
    // The drafts tested: those accepted and the first rejected one (the
    // rest were never compared).
    history.trials = kDecay * history.trials + n_accepted + (n_accepted < n_drafted ? 1 : 0);
    history.n_steps_idle = 0;
}

void SpeculationPolicy::record_idle(AcceptanceHistory& history) {
    history.accepted *= kIdleDecay;
    history.trials *= kIdleDecay;
    ++history.n_steps_idle;
}

void SpeculationPolicy::plan(std::span<const DraftCandidate> candidates, StepShape base,
                             double n_base_tokens, const StepCostModel& target_cost,
                             const StepCostModel* draft_cost, std::span<int32_t> lengths) const {
    std::fill(lengths.begin(), lengths.end(), 0);
    const bool costs_known = target_cost.ready() && (draft_cost == nullptr || draft_cost->ready());
    if (!costs_known) {
        // Nothing measured yet: draft in full, which is what teaches the
        // cost model what rows cost.
        for (size_t i = 0; i < candidates.size(); ++i) lengths[i] = candidates[i].max_tokens;
        return;
    }
    if (draft_cost != nullptr) {
        plan_per_depth(candidates, base, n_base_tokens, target_cost, *draft_cost, lengths);
    } else {
        plan_per_sequence(candidates, base, n_base_tokens, target_cost, lengths);
    }
}

// Each (sequence, depth) is one row whose expected gain is acceptance^depth
// (every draft before it accepted too). Best value per second first, a row
// is taken while it raises the step's expected tokens per second by the margin.
void SpeculationPolicy::plan_per_sequence(std::span<const DraftCandidate> candidates,
                                          StepShape base, double n_base_tokens,
                                          const StepCostModel& target_cost,
                                          std::span<int32_t> lengths) const {
    std::vector<Item> items;
    for (size_t s = 0; s < candidates.size(); ++s) {
        const DraftCandidate& c = candidates[s];
        double gain = 1.0;
        for (int32_t depth = 1; depth <= c.max_tokens; ++depth) {
            gain *= c.acceptance;
            const double seconds = target_cost.marginal_row_seconds(c.n_context + depth);
            items.push_back({gain / seconds, gain, seconds, s, depth});
        }
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        return a.value_per_second > b.value_per_second;
    });
    double tokens = n_base_tokens;
    double seconds = target_cost.predict(base);
    for (const Item& item : items) {
        if (item.value_per_second <= (1.0 + margin_) * tokens / seconds) break;
        if (lengths[item.sequence] != item.depth - 1) continue;
        lengths[item.sequence] = item.depth;
        tokens += item.gain;
        seconds += item.seconds;
    }
}

// A draft model drafts every sequence at once, one draft step per depth, so
// a depth is taken for all or none: its gain is the sum over the sequences
// still drafting, its cost their rows plus one draft step.
void SpeculationPolicy::plan_per_depth(std::span<const DraftCandidate> candidates, StepShape base,
                                       double n_base_tokens, const StepCostModel& target_cost,
                                       const StepCostModel& draft_cost,
                                       std::span<int32_t> lengths) const {
    int32_t max_depth = 0;
    for (const DraftCandidate& c : candidates) max_depth = std::max(max_depth, c.max_tokens);
    std::vector<double> gains(candidates.size(), 1.0);
    double tokens = n_base_tokens;
    double seconds = target_cost.predict(base);
    for (int32_t depth = 1; depth <= max_depth; ++depth) {
        double gain = 0.0;
        double target_seconds = 0.0;
        StepShape draft_step;
        for (size_t s = 0; s < candidates.size(); ++s) {
            const DraftCandidate& c = candidates[s];
            if (c.max_tokens < depth) continue;
            gains[s] *= c.acceptance;
            gain += gains[s];
            target_seconds += target_cost.marginal_row_seconds(c.n_context + depth);
            draft_step.n_rows += 1.0;
            draft_step.n_context += c.n_context + depth;
        }
        const double cost = target_seconds + draft_cost.predict(draft_step);
        if (gain <= (1.0 + margin_) * cost * tokens / seconds) break;
        for (size_t s = 0; s < candidates.size(); ++s) {
            if (candidates[s].max_tokens >= depth) lengths[s] = depth;
        }
        tokens += gain;
        seconds += cost;
    }
}

}  // namespace ladder::engine
