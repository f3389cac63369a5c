// SentencePiece BPE, following llama.cpp's llm_tokenizer_spm_session.
#include "ladder/tokenizer/spm_tokenizer.h"

#include <queue>

#include <fmt/format.h>

#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581 "▁"

struct SpmSymbol {
    int prev;
    int next;
    size_t begin;
    size_t size;  // 0 once merged into its left neighbour
};

struct SpmBigram {
    int left;
    int right;
    float score;
    size_t size;
};

// Highest score first; among equal scores the leftmost pair.
struct WorseBigram {
    bool operator()(const SpmBigram& a, const SpmBigram& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    for (size_t at = text.find(from); at != std::string_view::npos; at = text.find(from, pos)) {
        out.append(text.substr(pos, at - pos));
        out.append(to);
        pos = at + from.size();
    }
    out.append(text.substr(pos));
    return out;
}

}  // namespace

SpmTokenizer::SpmTokenizer(Vocabulary vocabulary) : TokenizerBase(std::move(vocabulary)) {
    byte_tokens_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
        // "<0xNN>", or else the byte itself as a token (llama.cpp's fallback).
        TokenId id = find_token(fmt::format("<0x{:02X}>", b));
        if (id < 0) {
            const char c = static_cast<char>(b);
            id = find_token(std::string_view(&c, 1));
        }
        byte_tokens_[b] = id;
    }
}

void SpmTokenizer::append_bytes(std::string_view bytes, std::vector<TokenId>& out) const {
    for (const char c : bytes) {
        const TokenId id = byte_tokens_[static_cast<uint8_t>(c)];
        // llama.cpp aborts on a byte with no token; ladder falls back to the
        // unknown token, or drops the byte when there is none.
        if (id >= 0) {
            out.push_back(id);
        } else if (vocabulary().unknown_id) {
            out.push_back(*vocabulary().unknown_id);
        }
    }
}

void SpmTokenizer::encode_text(std::string_view raw, bool after_special,
                               std::vector<TokenId>& out) const {
    std::string text;
    if (vocabulary().add_space_prefix.value_or(false) && after_special) text = " ";
    text.append(raw);
    text = replace_all(text, " ", kSpaceMarker);
    if (text.empty()) return;

    // Symbols are characters by their lead byte, without validation: an
    // invalid sequence is one symbol that ends up as byte tokens.
    std::vector<SpmSymbol> symbols;
    for (size_t offset = 0; offset < text.size();) {
        const size_t size = std::min(text.size() - offset,
                                     utf8::sequence_length(static_cast<uint8_t>(text[offset])));
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, offset + size == text.size() ? -1 : index + 1, offset, size});
        offset += size;
    }

    const std::vector<float>& scores = vocabulary().scores;
    std::priority_queue<SpmBigram, std::vector<SpmBigram>, WorseBigram> queue;
    const auto try_add = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const size_t size = symbols[left].size + symbols[right].size;
        const TokenId id = find_token(std::string_view(text).substr(symbols[left].begin, size));
        if (id < 0) return;
        const float score = static_cast<size_t>(id) < scores.size() ? scores[id] : 0.0f;
        queue.push({left, right, score, size});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const SpmBigram bigram = queue.top();
        queue.pop();
        SpmSymbol& left = symbols[bigram.left];
        SpmSymbol& right = symbols[bigram.right];
        if (left.size == 0 || right.size == 0 || left.size + right.size != bigram.size) continue;
        left.size += right.size;
        right.size = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = bigram.left;
        try_add(left.prev, bigram.left);
        try_add(bigram.left, left.next);
    }

    // Every merge made a token, so a symbol without one is an unmerged
    // character that falls back to its bytes.
    for (int i = 0; i != -1; i = symbols[i].next) {
        const std::string_view piece =
            std::string_view(text).substr(symbols[i].begin, symbols[i].size);
        if (const TokenId id = find_token(piece); id >= 0) {
            out.push_back(id);
        } else {
            append_bytes(piece, out);
        }
    }
}

std::string SpmTokenizer::normal_piece(const std::string& text) const {
    return replace_all(text, kSpaceMarker, " ");
}

}  // namespace ladder::tokenizer
