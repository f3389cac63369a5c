// Small hand-made vocabularies for tokenizer unit tests: every expected id
// below can be worked out by hand from these lists.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "ladder/tokenizer/byte_unicode.h"
#include "ladder/tokenizer/vocabulary.h"

namespace ladder::tokenizer::testing {

// Byte-level BPE: ids 0..2 are control tokens, 3 a user-defined one, then the
// 256 byte spellings (id 4 + byte), then merged tokens in merge order.
inline Vocabulary tiny_bpe(const std::string& pre, const std::vector<std::string>& merges) {
    Vocabulary v;
    v.model = "gpt2";
    v.pre = pre;
    v.tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool>"};
    v.kinds = {TokenKind::Control, TokenKind::Control, TokenKind::Control,
               TokenKind::UserDefined};
    for (int b = 0; b < 256; ++b) {
        v.tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
        v.kinds.push_back(TokenKind::Normal);
    }
    for (const auto& merge : merges) {
        const auto space = merge.find(' ', 1);
        v.tokens.push_back(merge.substr(0, space) + merge.substr(space + 1));
        v.kinds.push_back(TokenKind::Normal);
    }
    v.merges = merges;
    v.bos_id = 0;
    v.eos_id = 0;
    v.add_bos = false;
    return v;
}

inline TokenId byte_id(char c) { return 4 + static_cast<uint8_t>(c); }

// SentencePiece: <unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF> (id 3 +
// byte), then pieces with their scores.
inline Vocabulary tiny_spm(const std::vector<std::pair<std::string, float>>& pieces) {
    Vocabulary v;
    v.model = "llama";
    v.tokens = {"<unk>", "<s>", "</s>"};
    v.kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control};
    v.scores = {0.0f, 0.0f, 0.0f};
    for (int b = 0; b < 256; ++b) {
        v.tokens.push_back(fmt::format("<0x{:02X}>", b));
        v.kinds.push_back(TokenKind::Byte);
        v.scores.push_back(0.0f);
    }
    for (const auto& [text, score] : pieces) {
        v.tokens.push_back(text);
        v.kinds.push_back(TokenKind::Normal);
        v.scores.push_back(score);
    }
    return v;
}

inline TokenId spm_byte_id(uint8_t b) { return 3 + b; }

}  // namespace ladder::tokenizer::testing
