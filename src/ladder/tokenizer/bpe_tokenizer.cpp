// Byte-level BPE, following llama.cpp's llm_tokenizer_bpe_session.
#include "ladder/tokenizer/bpe_tokenizer.h"

#include <queue>

#include <fmt/format.h>

#include "ladder/tokenizer/byte_unicode.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer {

namespace {

std::string merge_key(std::string_view left, std::string_view right) {
    std::string key;
    key.reserve(left.size() + right.size() + 1);
    key.append(left);
    key.push_back('\xff');
    key.append(right);
    return key;
}

// One symbol of a word: a span of the word, linked to its live neighbours.
struct Symbol {
    int prev;
    int next;
    size_t begin;
    size_t size;  // 0 once merged into its left neighbour
};

struct Bigram {
    int left;
    int right;
    int rank;
    size_t size;  // bytes of left + right when queued, to spot stale entries
};

// Lowest rank first; among equal ranks the leftmost pair.
struct LaterBigram {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

}  // namespace

BpeTokenizer::BpeTokenizer(Vocabulary vocabulary, const PreTokenizerSpec& spec)
    : TokenizerBase(std::move(vocabulary)),
      pre_tokenizer_(spec.patterns),
      ignore_merges_(spec.ignore_merges) {
    const auto& merges = this->vocabulary().merges;
    ranks_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        // "left right", split at the first space after the first byte (so a
        // left side may itself be a space); a merge without one pairs "" and
        // "", as in llama.cpp. The first of duplicate merges keeps its rank.
        const std::string& merge = merges[i];
        const size_t space = merge.find(' ', 1);
        std::string_view left, right;
        if (space != std::string::npos) {
            left = std::string_view(merge).substr(0, space);
            right = std::string_view(merge).substr(space + 1);
        }
        ranks_.try_emplace(merge_key(left, right), static_cast<int>(i));
    }
}

int BpeTokenizer::rank_of(std::string_view left, std::string_view right) const {
    const auto it = ranks_.find(merge_key(left, right));
    return it == ranks_.end() ? -1 : it->second;
}

void BpeTokenizer::encode_text(std::string_view text, bool /*after_special*/,
                               std::vector<TokenId>& out) const {
    for (const std::string& word : pre_tokenizer_.split(text)) {
        encode_word(bytes_to_unicode_text(word), out);
    }
}

void BpeTokenizer::encode_word(const std::string& word, std::vector<TokenId>& out) const {
    if (word.empty()) return;
    if (ignore_merges_) {
        if (const TokenId id = find_token(word); id >= 0) {
            out.push_back(id);
            return;
        }
    }
    std::vector<Symbol> symbols;
    for (size_t offset = 0; offset < word.size();) {
        const size_t size = std::min(word.size() - offset,
                                     utf8::sequence_length(static_cast<uint8_t>(word[offset])));
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, offset + size == word.size() ? -1 : index + 1, offset, size});
        offset += size;
    }
    const auto text = [&](const Symbol& s) {
        return std::string_view(word).substr(s.begin, s.size);
    };

    std::priority_queue<Bigram, std::vector<Bigram>, LaterBigram> queue;
    const auto try_add = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const int rank = rank_of(text(symbols[left]), text(symbols[right]));
        if (rank < 0) return;
        queue.push({left, right, rank, symbols[left].size + symbols[right].size});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const Bigram bigram = queue.top();
        queue.pop();
        Symbol& left = symbols[bigram.left];
        Symbol& right = symbols[bigram.right];
        // Stale: one side was merged away or grew since the pair was queued.
        // Symbols only grow rightwards and stay adjacent, so a pair whose
        // sides are live and whose size is unchanged is the queued text.
        if (left.size == 0 || right.size == 0 || left.next != bigram.right ||
            left.size + right.size != bigram.size) {
            continue;
        }
        left.size += right.size;
        right.size = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = bigram.left;
        try_add(left.prev, bigram.left);
        try_add(bigram.left, left.next);
    }

    for (const Symbol& symbol : symbols) {
        if (symbol.size == 0) continue;
        const std::string_view piece = text(symbol);
        if (const TokenId id = find_token(piece); id >= 0) {
            out.push_back(id);
            continue;
        }
        // No token for the symbol: each of its bytes alone, if that is a
        // token; llama.cpp drops bytes that are not.
        for (const char c : piece) {
            if (const TokenId id = find_token(std::string_view(&c, 1)); id >= 0) out.push_back(id);
        }
    }
}

std::string BpeTokenizer::normal_piece(const std::string& text) const {
    std::string bytes;
    bytes.reserve(text.size());
    for (const uint32_t cpt : utf8::decode_lenient(text)) {
        if (const auto byte = unicode_to_byte(cpt)) {
            bytes.push_back(static_cast<char>(*byte));
        } else {
            // Not a byte-level spelling; llama.cpp renders it like this.
            const std::string raw = utf8::encode(cpt);
            bytes += "[UNK_BYTE_0x";
            for (const char c : raw) bytes += fmt::format("{:02x}", static_cast<uint8_t>(c));
            bytes += text + "]";
        }
    }
    return bytes;
}

}  // namespace ladder::tokenizer
