// Special-token partition of input text. A trie pass first finds which
// special tokens occur at all, so that a vocabulary with thousands of them
// (Gemma) costs one scan of the text, not one per token.
#include "ladder/tokenizer/special_tokens.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::tokenizer {

SpecialTokenMatcher::SpecialTokenMatcher(std::vector<TokenId> candidates,
                                         std::vector<bool> always_matched,
                                         const std::vector<std::string>& token_texts)
    : candidates_(std::move(candidates)),
      always_matched_(std::move(always_matched)),
      token_texts_(&token_texts),
      trie_(1) {
    LADDER_CHECK(candidates_.size() == always_matched_.size(), "one flag per candidate");
    for (size_t i = 0; i < candidates_.size(); ++i) {
        int32_t node = 0;
        for (const char c : token_texts[candidates_[i]]) {
            const auto byte = static_cast<uint8_t>(c);
            int32_t next = child(node, byte);
            if (next < 0) {
                next = static_cast<int32_t>(trie_.size());
                auto& children = trie_[node].children;
                children.insert(std::upper_bound(children.begin(), children.end(),
                                                 std::make_pair(byte, INT32_MIN)),
                                {byte, next});
                trie_.emplace_back();  // invalidates `children`; not used after
            }
            node = next;
        }
        // Token texts are unique, so no node ends two candidates.
        if (node != 0) trie_[node].candidate = static_cast<int32_t>(i);
    }
}

int32_t SpecialTokenMatcher::child(int32_t node, uint8_t byte) const {
    const auto& children = trie_[node].children;
    const auto it = std::lower_bound(children.begin(), children.end(),
                                     std::make_pair(byte, INT32_MIN));
    return (it != children.end() && it->first == byte) ? it->second : -1;
}

bool SpecialTokenMatcher::find_occurrences(std::string_view text, bool parse_special,
                                           size_t max_occurrences,
                                           std::vector<Occurrence>& out) const {
    out.clear();
    for (size_t begin = 0; begin < text.size(); ++begin) {
        int32_t node = 0;
        for (size_t i = begin; i < text.size(); ++i) {
            node = child(node, static_cast<uint8_t>(text[i]));
            if (node < 0) break;
            const int32_t candidate = trie_[node].candidate;
            if (candidate < 0 || !(parse_special || always_matched_[candidate])) continue;
            if (out.size() == max_occurrences) return false;
            out.push_back({candidate, static_cast<uint32_t>(begin)});
        }
    }
    std::sort(out.begin(), out.end(), [](const Occurrence& a, const Occurrence& b) {
        return a.candidate != b.candidate ? a.candidate < b.candidate : a.offset < b.offset;
    });
    return true;
}

// Claims occurrences candidate by candidate, each left to right: one is
// taken when it does not overlap a claimed token nor the candidate's own
// previous one. That is exactly what splitting fragments does: a fragment is
// a gap between claimed tokens. Earlier candidates are never shorter, so an
// occurrence overlaps a claimed token iff its first or last byte is claimed.
std::vector<Fragment> SpecialTokenMatcher::partition_by_occurrences(
    std::string_view text, const std::vector<Occurrence>& found) const {
    std::vector<bool> claimed(text.size(), false);
    std::vector<Occurrence> taken;
    int32_t current = -1;
    size_t current_end = 0;
    for (const Occurrence& occurrence : found) {
        if (occurrence.candidate != current) {
            current = occurrence.candidate;
            current_end = 0;
        }
        const size_t size = (*token_texts_)[candidates_[current]].size();
        const size_t begin = occurrence.offset;
        if (begin < current_end || claimed[begin] || claimed[begin + size - 1]) continue;
        std::fill(claimed.begin() + begin, claimed.begin() + begin + size, true);
        taken.push_back(occurrence);
        current_end = begin + size;
    }
    std::sort(taken.begin(), taken.end(),
              [](const Occurrence& a, const Occurrence& b) { return a.offset < b.offset; });

    std::vector<Fragment> fragments;
    size_t done = 0;
    for (const Occurrence& occurrence : taken) {
        const TokenId id = candidates_[occurrence.candidate];
        if (occurrence.offset > done) fragments.push_back({-1, done, occurrence.offset - done});
        fragments.push_back({id, occurrence.offset, (*token_texts_)[id].size()});
        done = occurrence.offset + (*token_texts_)[id].size();
    }
    if (done < text.size()) fragments.push_back({-1, done, text.size() - done});
    return fragments;
}

// The same result by searching each occurring candidate's text in every
// remaining fragment, as llama.cpp does; for texts where occurrences overlap
// too densely to list (a long run of newlines against Gemma's newline tokens).
std::vector<Fragment> SpecialTokenMatcher::partition_by_search(
    std::string_view text, const std::vector<Occurrence>& found) const {
    std::vector<Fragment> fragments{{-1, 0, text.size()}};
    std::vector<Fragment> next;
    int32_t previous = -1;
    for (const Occurrence& occurrence : found) {
        if (occurrence.candidate == previous) continue;
        previous = occurrence.candidate;
        const TokenId id = candidates_[occurrence.candidate];
        const std::string& needle = (*token_texts_)[id];
        next.clear();
        for (const Fragment& fragment : fragments) {
            if (!fragment.is_text()) {
                next.push_back(fragment);
                continue;
            }
            const std::string_view piece = text.substr(fragment.offset, fragment.length);
            size_t done = 0;
            for (size_t at = piece.find(needle); at != std::string_view::npos;
                 at = piece.find(needle, done)) {
                if (at > done) next.push_back({-1, fragment.offset + done, at - done});
                next.push_back({id, fragment.offset + at, needle.size()});
                done = at + needle.size();
            }
            if (done < piece.size()) {
                next.push_back({-1, fragment.offset + done, piece.size() - done});
            }
        }
        fragments.swap(next);
    }
    return fragments;
}

std::vector<Fragment> SpecialTokenMatcher::partition(std::string_view text,
                                                     bool parse_special) const {
    if (text.empty()) return {};
    // Offsets are kept in 32 bits; longer texts take the search path.
    const size_t max_occurrences = text.size() < UINT32_MAX ? 4 * text.size() + 1024 : 0;
    std::vector<Occurrence> found;
    if (find_occurrences(text, parse_special, max_occurrences, found)) {
        return partition_by_occurrences(text, found);
    }
    // Too many to list: list each occurring candidate once instead.
    std::vector<bool> seen(candidates_.size(), false);
    for (size_t begin = 0; begin < text.size(); ++begin) {
        int32_t node = 0;
        for (size_t i = begin; i < text.size(); ++i) {
            node = child(node, static_cast<uint8_t>(text[i]));
            if (node < 0) break;
            const int32_t candidate = trie_[node].candidate;
            if (candidate >= 0 && (parse_special || always_matched_[candidate])) {
                seen[candidate] = true;
            }
        }
    }
    found.clear();
    for (size_t i = 0; i < seen.size(); ++i) {
        if (seen[i]) found.push_back({static_cast<int32_t>(i), 0});
    }
    return partition_by_search(text, found);
}

}  // namespace ladder::tokenizer
