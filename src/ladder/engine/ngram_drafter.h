// Prompt lookup (vLLM's `ngram`, llama.cpp's `ngram-simple`): the sequence's
// last n tokens, for n from prompt_lookup_max down to prompt_lookup_min, are
// looked for earlier in its own prompt and output, and what followed the most
// recent match is proposed. Free to compute and right whenever the output
// copies the input: quoting, editing, summarizing a document, code changes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ladder/engine/drafter.h"

namespace ladder::engine {

// A continuation found by lookup: where it starts in the searched tokens
// and how long the matched n-gram was (0: nothing found).
struct NgramMatch {
    int32_t continuation = 0;
    int32_t n_matched = 0;
};

// Searches tokens for the latest earlier occurrence of its last n tokens,
// longest n first, n in [min_n, max_n]. The continuation has at least one token.
NgramMatch find_ngram_continuation(std::span<const TokenId> tokens, int32_t min_n, int32_t max_n);

class NgramDrafter final : public Drafter {
public:
    NgramDrafter(int32_t prompt_lookup_min, int32_t prompt_lookup_max)
        : min_n_(prompt_lookup_min), max_n_(prompt_lookup_max) {}

    void propose(std::span<const DraftRequest> requests) override;

private:
    int32_t min_n_;
    int32_t max_n_;
};

// Appends to draft up to max_tokens tokens following match in tokens.
void propose_continuation(std::span<const TokenId> tokens, NgramMatch match, int32_t max_tokens,
                          std::vector<TokenId>& draft);

}  // namespace ladder::engine
