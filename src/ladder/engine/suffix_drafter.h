// Suffix decoding (Oliaro et al., arXiv 2411.04975): proposals from a suffix
// index over the earlier prompts and outputs of requests with the same cache
// salt (tenant), and from the request's own tokens (prompt lookup). The index
// proposes its most frequent continuation, as long as its match and
// frequencies allow; a request's draft length then follows how well its
// proposals have been accepted (the speculation policy).
#pragma once

#include "ladder/engine/drafter.h"
#include "ladder/engine/speculative_config.h"
#include "ladder/engine/tenant_suffix_index.h"

namespace ladder::engine {

class SuffixDrafter final : public Drafter {
public:
    explicit SuffixDrafter(const SpeculativeConfig& config);

    void propose(std::span<const DraftRequest> requests) override;
    // A finished request's prompt and output join its salt's index.
    void on_released(const Sequence& sequence, bool finished) override;

    const TenantSuffixIndex& index() const { return index_; }

private:
    TenantSuffixIndex index_;
    double max_spec_factor_;
    double min_token_prob_;
};

}  // namespace ladder::engine
