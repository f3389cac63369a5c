// Splits text at special-token texts before the model's own tokenizer runs,
// with the result of llama.cpp's tokenizer_st_partition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/tokenizer/vocabulary.h"

namespace ladder::tokenizer {

// A token found in the text, or a span of text still to tokenize.
struct Fragment {
    TokenId token = -1;  // -1: raw text
    size_t offset = 0;
    size_t length = 0;

    bool is_text() const { return token < 0; }
};

class SpecialTokenMatcher {
public:
    // candidates: the special tokens, longest text first; always_matched[i]
    // says whether candidates[i] is matched even without parse_special
    // (user-defined tokens are; control and unknown ones are not).
    SpecialTokenMatcher(std::vector<TokenId> candidates, std::vector<bool> always_matched,
                        const std::vector<std::string>& token_texts);

    // Each candidate in turn (longest first) splits every remaining text
    // fragment at each of its non-overlapping occurrences, left to right; so
    // a longer token wins over any shorter one wherever they overlap.
    std::vector<Fragment> partition(std::string_view text, bool parse_special) const;

private:
    struct Node {
        std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
        int32_t candidate = -1;  // index into candidates_ whose text ends here
    };

    struct Occurrence {
        int32_t candidate;
        uint32_t offset;
    };

    int32_t child(int32_t node, uint8_t byte) const;
    // Every occurrence of every candidate, in priority order then offset;
    // false when there are more than max_occurrences (dense overlaps).
    bool find_occurrences(std::string_view text, bool parse_special, size_t max_occurrences,
                          std::vector<Occurrence>& out) const;
    std::vector<Fragment> partition_by_occurrences(std::string_view text,
                                                   const std::vector<Occurrence>& found) const;
    std::vector<Fragment> partition_by_search(std::string_view text,
                                              const std::vector<Occurrence>& found) const;

    std::vector<TokenId> candidates_;
    std::vector<bool> always_matched_;
    const std::vector<std::string>* token_texts_;
    std::vector<Node> trie_;  // node 0 is the root
};

}  // namespace ladder::tokenizer
