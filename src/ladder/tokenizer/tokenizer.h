// Text <-> token ids for one vocabulary, matching llama.cpp id for id.
// Built once per model and then read-only, so it is safe to share across threads.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/tokenizer/vocabulary.h"

namespace ladder::tokenizer {

// Supported: model "gpt2" (byte-level BPE) with pre-tokenizers default,
// gpt-2, smollm, llama-bpe (Llama 3), qwen2 and the llama.cpp names that share
// their regexes; model "llama" (SentencePiece BPE: Llama 2, Mistral, Gemma).
class Tokenizer {
public:
    // Throws util::InputError for an unknown tokenizer model or pre-tokenizer,
    // or an inconsistent vocabulary (duplicate token texts, short score or
    // type arrays, add_bos/add_eos without a valid id).
    static std::unique_ptr<Tokenizer> create(Vocabulary vocabulary);
    virtual ~Tokenizer() = default;

    // add_special: prepend BOS / append EOS as the vocabulary's add_* rules say.
    // parse_special: recognise control tokens written in the text (chat
    // templates need it; user content must not get it by default). User-defined
    // tokens (Gemma's "<table>", runs of spaces) are matched either way, as in
    // llama.cpp; where special texts overlap, the longer wins.
    //
    // Invalid UTF-8 is never a crash and gives llama.cpp's ids:
    // - byte-level BPE decodes leniently (overlong forms and surrogates pass);
    //   every byte that starts no complete sequence becomes U+FFFD, and a
    //   4-byte form above U+10FFFF becomes one U+FFFD (llama.cpp throws there).
    // - SentencePiece splits characters by lead byte without validation; a
    //   piece with no token falls back to its <0xNN> byte tokens.
    virtual std::vector<TokenId> encode(std::string_view text, bool add_special,
                                        bool parse_special) const = 0;

    // The bytes a token stands for (a byte token gives its byte, the space
    // marker becomes a space). Control tokens give "" unless render_special;
    // user-defined tokens always render. Throws util::InputError for an id
    // outside the vocabulary.
    virtual std::string token_to_piece(TokenId id, bool render_special = false) const = 0;
    // The pieces concatenated; may hold invalid UTF-8 when ids split a
    // character (StreamingDetokenizer never does). Unlike llama_detokenize it
    // neither strips a leading space nor cleans up spaces before punctuation.
    std::string decode(std::span<const TokenId> ids, bool render_special = false) const;

    // The vocabulary as given, with llama.cpp's defaults filled in: bos/eos/
    // unknown ids, add_bos/add_eos/add_space_prefix always set, eot/eom found
    // by token text when the file has none.
    virtual const Vocabulary& vocabulary() const = 0;
    int32_t vocab_size() const { return static_cast<int32_t>(vocabulary().tokens.size()); }
    // EOS, EOT, EOM and other end-of-generation tokens.
    virtual bool is_end_of_generation(TokenId id) const = 0;
    // Finds a token by its exact text (e.g. "<|im_end|>"); -1 when absent.
    virtual TokenId find_token(std::string_view text) const = 0;
};

// Turns a stream of token ids into text deltas that are always whole UTF-8
// characters: bytes of a character split across tokens are held back until
// the character is complete, and bytes that can never complete one (or that
// form overlongs, surrogates or code points above U+10FFFF) become U+FFFD.
// Control tokens render as nothing.
class StreamingDetokenizer {
public:
    explicit StreamingDetokenizer(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
    // Returns the text that became complete with this token (may be empty).
    std::string push(TokenId id);
    // Returns what is left at the end; incomplete bytes become U+FFFD.
    std::string flush();

private:
    const Tokenizer& tokenizer_;
    std::string pending_;
};

}  // namespace ladder::tokenizer
