#include "ladder/engine/spec_decode_stats.h"

#include <algorithm>

namespace ladder::engine {

SpecDecodeSummary summarize(const SpecDecodeStats& stats) {
    SpecDecodeSummary summary;
    if (stats.n_draft_tokens > 0) {
        summary.acceptance_rate =
            static_cast<double>(stats.n_accepted_tokens) / static_cast<double>(stats.n_draft_tokens);
    }
    if (stats.n_drafts > 0) {
        const auto drafts = static_cast<double>(stats.n_drafts);
        summary.acceptance_length = 1.0 + static_cast<double>(stats.n_accepted_tokens) / drafts;
        for (const int64_t accepted : stats.n_accepted_per_position) {
            summary.per_position_acceptance_rates.push_back(static_cast<double>(accepted) / drafts);
        }
    }
    return summary;
}

SpecDecodeStats difference(const SpecDecodeStats& after, const SpecDecodeStats& before) {
    SpecDecodeStats delta;
    delta.n_drafts = after.n_drafts - before.n_drafts;
    delta.n_draft_tokens = after.n_draft_tokens - before.n_draft_tokens;
    delta.n_accepted_tokens = after.n_accepted_tokens - before.n_accepted_tokens;
    delta.n_accepted_per_position = after.n_accepted_per_position;
    for (size_t i = 0; i < delta.n_accepted_per_position.size(); ++i) {
        if (i < before.n_accepted_per_position.size())
            delta.n_accepted_per_position[i] -= before.n_accepted_per_position[i];
    }
    return delta;
}

}  // namespace ladder::engine
