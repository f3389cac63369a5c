// Speculative decoding's counters under vLLM's names, and the figures vLLM's
// bench derives from them (acceptance rate and length, per position).
#pragma once

#include <cstdint>
#include <vector>

namespace ladder::engine {

struct SpecDecodeStats {
    int64_t n_drafts = 0;           // spec_decode_num_drafts: verifications of 1+ drafted tokens
    int64_t n_draft_tokens = 0;     // spec_decode_num_draft_tokens: drafted and verified
    int64_t n_accepted_tokens = 0;  // spec_decode_num_accepted_tokens
    // spec_decode_num_accepted_tokens_per_pos{position}: drafts whose token
    // at that position was accepted. [num_speculative_tokens]
    std::vector<int64_t> n_accepted_per_position;
};

struct SpecDecodeSummary {
    double acceptance_rate = 0.0;    // accepted / drafted tokens, in [0, 1]
    double acceptance_length = 0.0;  // 1 + accepted / drafts: tokens per verification
    std::vector<double> per_position_acceptance_rates;  // accepted at position i / drafts
};

SpecDecodeSummary summarize(const SpecDecodeStats& stats);

// after - before, counter by counter (a benchmark's share of a server's totals).
SpecDecodeStats difference(const SpecDecodeStats& after, const SpecDecodeStats& before);

}  // namespace ladder::engine
