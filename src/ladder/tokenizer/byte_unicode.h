// GPT-2's reversible byte <-> unicode mapping: byte-level BPE vocabularies
// spell every byte as a printable code point (space is "Ġ", newline "Ċ").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ladder::tokenizer {

// The UTF-8 text of the code point standing for a byte.
const std::string& byte_to_unicode(uint8_t byte);
// The byte a code point stands for; nullopt when it stands for none.
std::optional<uint8_t> unicode_to_byte(uint32_t cpt);

// Maps every byte of raw text to its code point (the vocabulary's spelling).
std::string bytes_to_unicode_text(std::string_view raw);

}  // namespace ladder::tokenizer
