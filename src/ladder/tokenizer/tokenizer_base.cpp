// Special-token partition, BOS/EOS rules and piece rendering shared by all
// tokenizer models, as llama.cpp's llama_vocab::impl::tokenize and
// token_to_piece do them.
#include "ladder/tokenizer/tokenizer_base.h"

#include <algorithm>

#include "ladder/util/error.h"

namespace ladder::tokenizer {

TokenizerBase::TokenizerBase(Vocabulary vocabulary) : vocabulary_(std::move(vocabulary)) {
    resolved_ = resolve_tokens(vocabulary_);
    ids_.reserve(vocabulary_.tokens.size());
    for (size_t i = 0; i < vocabulary_.tokens.size(); ++i) {
        ids_.emplace(vocabulary_.tokens[i], static_cast<TokenId>(i));
    }
    // Without parse_special, user-defined tokens are still split out first
    // (Hugging Face tokenizers do the same); control and unknown are not.
    std::vector<bool> always_matched;
    for (const TokenId id : resolved_.special) {
        always_matched.push_back((resolved_.attrs[id] & (kAttrControl | kAttrUnknown)) == 0);
    }
    special_matcher_ = std::make_unique<SpecialTokenMatcher>(
        resolved_.special, std::move(always_matched), vocabulary_.tokens);
}

std::vector<TokenId> TokenizerBase::encode(std::string_view text, bool add_special,
                                           bool parse_special) const {
    std::vector<TokenId> out;
    const auto fragments = special_matcher_->partition(text, parse_special);
    if (add_special && vocabulary_.add_bos.value_or(false)) out.push_back(*vocabulary_.bos_id);
    bool after_special = true;
    for (const Fragment& fragment : fragments) {
        if (fragment.is_text()) {
            encode_text(text.substr(fragment.offset, fragment.length), after_special, out);
            after_special = false;
        } else {
            out.push_back(fragment.token);
            after_special = true;
        }
    }
    if (add_special && vocabulary_.add_eos.value_or(false)) out.push_back(*vocabulary_.eos_id);
    return out;
}

std::string TokenizerBase::token_to_piece(TokenId id, bool render_special) const {
    if (id < 0 || id >= vocab_size()) {
        util::fail("token id {} is out of range (vocabulary has {} tokens)", id, vocab_size());
    }
    const uint32_t attr = resolved_.attrs[id];
    if (!render_special && (attr & (kAttrUnknown | kAttrControl))) return {};
    const std::string& text = text_of(id);
    if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return text;
    if (attr & kAttrNormal) return normal_piece(text);
    if (attr & kAttrByte) {
        // "<0xNN>": the two hex digits, parsed leniently like strtol.
        unsigned value = 0;
        for (size_t i = 3; i < 5 && i < text.size(); ++i) {
            const char c = text[i];
            const int digit = (c >= '0' && c <= '9')   ? c - '0'
                              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                       : -1;
            if (digit < 0) break;
            value = value * 16 + static_cast<unsigned>(digit);
        }
        return std::string(1, static_cast<char>(value));
    }
    return {};  // unused and undefined tokens render as nothing
}

bool TokenizerBase::is_end_of_generation(TokenId id) const {
    return std::binary_search(resolved_.end_of_generation.begin(),
                              resolved_.end_of_generation.end(), id);
}

TokenId TokenizerBase::find_token(std::string_view text) const {
    const auto it = ids_.find(text);
    return it == ids_.end() ? -1 : it->second;
}

}  // namespace ladder::tokenizer
