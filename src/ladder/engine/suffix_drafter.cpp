#include "ladder/engine/suffix_drafter.h"

#include <algorithm>
#include <cmath>

#include "ladder/engine/ngram_drafter.h"

namespace ladder::engine {

namespace {

// The request's own tokens: the longest n-gram (up to the index's depth)
// found earlier in them, the way prompt lookup does.
constexpr int32_t kOwnLookupMin = 2;

}  // namespace

SuffixDrafter::SuffixDrafter(const SpeculativeConfig& config)
    : index_(config.suffix_max_tree_depth, config.suffix_max_cached_requests,
             config.suffix_max_nodes),
      max_spec_factor_(config.suffix_max_spec_factor),
      min_token_prob_(config.suffix_min_token_prob) {}

void SuffixDrafter::propose(std::span<const DraftRequest> requests) {
    for (const DraftRequest& request : requests) {
        const std::vector<TokenId>& tokens = request.sequence->tokens;
        const SuffixIndex* tenant = index_.find(request.sequence->params.cache_salt);
        SuffixProposal shared =
            tenant == nullptr
                ? SuffixProposal{}
                : tenant->propose(tokens, request.max_tokens, max_spec_factor_, min_token_prob_);
        // The longer match is the better evidence; the shared index, which
        // counts how often each continuation followed, wins ties.
        const NgramMatch own =
            find_ngram_continuation(tokens, kOwnLookupMin, index_.max_depth() - 1);
        std::vector<TokenId>& draft = request.sequence->draft.tokens;
        if (own.n_matched > shared.n_matched) {
            const auto limit = static_cast<int32_t>(
                std::min<double>(request.max_tokens, std::floor(max_spec_factor_ * own.n_matched)));
            propose_continuation(tokens, own, limit, draft);
        } else {
            draft = std::move(shared.tokens);
        }
    }
}

void SuffixDrafter::on_released(const Sequence& sequence, bool finished) {
    if (finished) index_.insert(sequence.params.cache_salt, sequence.tokens);
}

}  // namespace ladder::engine
