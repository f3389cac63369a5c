// SentencePiece-style BPE (tokenizer.ggml.model = "llama": Llama 2, Mistral,
// Gemma): spaces become "▁", adjacent pieces merge highest score first, and
// characters without a token fall back to <0xNN> byte tokens.
#pragma once

#include "ladder/tokenizer/tokenizer_base.h"

namespace ladder::tokenizer {

class SpmTokenizer final : public TokenizerBase {
public:
    explicit SpmTokenizer(Vocabulary vocabulary);

protected:
    void encode_text(std::string_view text, bool after_special,
                     std::vector<TokenId>& out) const override;
    std::string normal_piece(const std::string& text) const override;

private:
    void append_bytes(std::string_view bytes, std::vector<TokenId>& out) const;

    std::vector<TokenId> byte_tokens_;  // [256]; -1 where the vocabulary lacks the byte
};

}  // namespace ladder::tokenizer
