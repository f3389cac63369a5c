// What the byte-level BPE and SentencePiece tokenizers share: the resolved
// vocabulary, text -> id lookup, special-token handling around the model's
// own algorithm, and rendering of token pieces.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ladder/tokenizer/special_tokens.h"
#include "ladder/tokenizer/token_attributes.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::tokenizer {

class TokenizerBase : public Tokenizer {
public:
    // vocabulary: validated, special ids resolved (see Tokenizer::create).
    explicit TokenizerBase(Vocabulary vocabulary);

    std::vector<TokenId> encode(std::string_view text, bool add_special,
                                bool parse_special) const override;
    std::string token_to_piece(TokenId id, bool render_special = false) const override;
    const Vocabulary& vocabulary() const override { return vocabulary_; }
    bool is_end_of_generation(TokenId id) const override;
    TokenId find_token(std::string_view text) const override;

    uint32_t attributes(TokenId id) const { return resolved_.attrs.at(id); }

protected:
    // Tokenizes one span of text between special tokens. after_special: the
    // span starts the text or follows a special token.
    virtual void encode_text(std::string_view text, bool after_special,
                             std::vector<TokenId>& out) const = 0;
    // The bytes of a normal token's text.
    virtual std::string normal_piece(const std::string& text) const = 0;

    const std::string& text_of(TokenId id) const { return vocabulary_.tokens[id]; }

private:
    Vocabulary vocabulary_;
    ResolvedTokens resolved_;
    std::unordered_map<std::string_view, TokenId> ids_;  // views into vocabulary_.tokens
    std::unique_ptr<SpecialTokenMatcher> special_matcher_;
};

}  // namespace ladder::tokenizer
