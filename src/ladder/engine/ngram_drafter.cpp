#include "ladder/engine/ngram_drafter.h"

#include <algorithm>

namespace ladder::engine {

NgramMatch find_ngram_continuation(std::span<const TokenId> tokens, int32_t min_n,
                                   int32_t max_n) {
    const auto n_tokens = static_cast<int32_t>(tokens.size());
    for (int32_t n = std::min(max_n, n_tokens - 1); n >= min_n; --n) {
        const std::span<const TokenId> pattern = tokens.last(static_cast<size_t>(n));
        // The latest occurrence that ends before the pattern itself does, so
        // that at least one token follows it. Scanning backwards finds it first.
        for (int32_t start = n_tokens - n - 1; start >= 0; --start) {
            if (tokens[static_cast<size_t>(start)] != pattern[0]) continue;
            if (std::equal(pattern.begin(), pattern.end(),
                           tokens.begin() + static_cast<std::ptrdiff_t>(start))) {
                return {start + n, n};
            }
        }
    }
    return {};
}

void propose_continuation(std::span<const TokenId> tokens, NgramMatch match, int32_t max_tokens,
                          std::vector<TokenId>& draft) {
    if (match.n_matched == 0) return;
    const auto end = std::min<int64_t>(static_cast<int64_t>(tokens.size()),
                                       int64_t{match.continuation} + max_tokens);
    for (int64_t i = match.continuation; i < end; ++i) draft.push_back(tokens[static_cast<size_t>(i)]);
}

void NgramDrafter::propose(std::span<const DraftRequest> requests) {
    for (const DraftRequest& request : requests) {
        const std::vector<TokenId>& tokens = request.sequence->tokens;
        const NgramMatch match = find_ngram_continuation(tokens, min_n_, max_n_);
        propose_continuation(tokens, match, request.max_tokens, request.sequence->draft.tokens);
    }
}

}  // namespace ladder::engine
