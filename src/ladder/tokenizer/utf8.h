// UTF-8 decoding and encoding as the tokenizers need it: a lenient decoder
// that mirrors llama.cpp (so invalid input splits the same way), and a strict
// scanner for the streaming detokenizer, which must never emit broken UTF-8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::tokenizer::utf8 {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Length of the sequence a lead byte announces, by its high nibble only
// (continuation bytes count as 1, F8..FF as 4), as llama.cpp splits text into
// symbols. Callers clip it at the end of the text.
size_t sequence_length(uint8_t lead);

// Decodes with llama.cpp's rule: a lead byte followed by the right number of
// continuation bytes is one code point (overlong forms and surrogates are
// accepted); any other byte becomes one U+FFFD and decoding resumes at the
// next byte. Differs from llama.cpp only where llama.cpp throws: a 4-byte form
// above U+10FFFF becomes one U+FFFD.
std::vector<uint32_t> decode_lenient(std::string_view text);

// Appends the UTF-8 form of a code point (surrogates included, 3 bytes).
void append(std::string& out, uint32_t cpt);
std::string encode(uint32_t cpt);

// Length of the well-formed sequence at text[pos] (1..4), 0 if the bytes
// there are a valid but incomplete prefix that runs to the end of text, or
// -n if the first n bytes are ill-formed (the maximal subpart, at least 1).
int strict_sequence_at(std::string_view text, size_t pos);

// Replaces each ill-formed subpart with U+FFFD; the result is valid UTF-8.
std::string sanitize(std::string_view text);

}  // namespace ladder::tokenizer::utf8
