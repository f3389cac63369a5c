// Per-token attributes as llama.cpp derives them: the file's token types,
// corrected by the known texts of end-of-turn, FIM and unused tokens. They
// decide which tokens are matched in text and how each token renders.
#pragma once

#include <cstdint>
#include <vector>

#include "ladder/tokenizer/vocabulary.h"

namespace ladder::tokenizer {

// Bit flags, numbered as llama.cpp's llama_token_attr.
enum TokenAttr : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
};

struct ResolvedTokens {
    std::vector<uint32_t> attrs;        // [n_tokens]
    std::vector<TokenId> end_of_generation;  // sorted ids
    std::vector<TokenId> special;       // matched in text: longest text first
};

// Fills vocabulary's unset special ids (eot, eom) by token text, and
// computes the attributes, the end-of-generation set and the special-token
// list. The vocabulary's other ids must already be resolved and in range.
ResolvedTokens resolve_tokens(Vocabulary& vocabulary);

}  // namespace ladder::tokenizer
