// Byte-level BPE (tokenizer.ggml.model = "gpt2"): regex pre-tokenizer, GPT-2
// byte mapping, then merges applied lowest rank first within each word.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "ladder/tokenizer/pre_tokenizer.h"
#include "ladder/tokenizer/tokenizer_base.h"

namespace ladder::tokenizer {

class BpeTokenizer final : public TokenizerBase {
public:
    BpeTokenizer(Vocabulary vocabulary, const PreTokenizerSpec& spec);

protected:
    void encode_text(std::string_view text, bool after_special,
                     std::vector<TokenId>& out) const override;
    std::string normal_piece(const std::string& text) const override;

private:
    void encode_word(const std::string& word, std::vector<TokenId>& out) const;
    // Rank of merging left and right; -1 when the vocabulary has no such merge.
    int rank_of(std::string_view left, std::string_view right) const;

    PreTokenizer pre_tokenizer_;
    bool ignore_merges_;
    // Keyed by left + '\xff' + right: 0xFF never occurs in UTF-8 text, so
    // the key is unambiguous.
    std::unordered_map<std::string, int> ranks_;
};

}  // namespace ladder::tokenizer
