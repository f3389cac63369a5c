// Splits text into words before byte-level BPE, with the regexes llama.cpp
// uses for each tokenizer.ggml.pre name, run on PCRE2 (UTF + UCP, JIT).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::tokenizer {

class Regex;

// The behaviour a pre-tokenizer name selects.
struct PreTokenizerSpec {
    std::vector<std::string> patterns;  // applied in order, each within the previous pieces
    bool ignore_merges = false;         // a word that is already a token is not merged
    bool add_bos_default = false;       // add_bos when the file does not say
};

// The spec for a tokenizer.ggml.pre value ("" means llama.cpp's default).
// Throws util::InputError for a name ladder does not know.
PreTokenizerSpec pre_tokenizer_spec(const std::string& pre);

class PreTokenizer {
public:
    explicit PreTokenizer(const std::vector<std::string>& patterns);
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    // The words of text, as raw UTF-8 (before the byte-to-unicode mapping).
    // Invalid UTF-8 is first decoded with utf8::decode_lenient, so each bad
    // byte arrives as U+FFFD. Each pattern splits every piece the previous
    // one produced; text between matches is kept as pieces of its own; a
    // lookahead cannot see past the end of its piece.
    std::vector<std::string> split(std::string_view text) const;

private:
    std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace ladder::tokenizer
