// Fuzzes Tokenizer::encode on both models' real vocabularies (SmolLM2's
// byte-level BPE, Gemma 3's SentencePiece): any bytes give ids inside the
// vocabulary; the streaming detokenizer gives valid UTF-8 and, for valid
// input, what decode gives; valid UTF-8 without special-token parsing comes
// back from decode unchanged (see below for what BPE leaves out).
//
// Input: one flags byte (bit 0: Gemma 3, bit 1: add_special, bit 2:
// parse_special), then the text.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "ladder/util/check.h"

namespace {

using namespace ladder;

// Whether every byte of part appears in whole, in order, in text.
bool is_subsequence(std::string_view part, std::string_view text) {
    size_t at = 0;
    for (const char c : part) {
        at = text.find(c, at);
        if (at == std::string_view::npos) return false;
        ++at;
    }
    return true;
}

// Printable ASCII, tab, newline and carriage return: characters every
// pre-tokenizer regex matches.
bool plain_ascii(std::string_view text) {
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (!((byte >= 0x20 && byte < 0x7f) || c == '\t' || c == '\n' || c == '\r')) return false;
    }
    return true;
}

std::string with_space_markers_as_spaces(std::string_view text) {
    constexpr std::string_view kMarker = "\xe2\x96\x81";  // U+2581
    std::string out;
    for (size_t i = 0; i < text.size();) {
        if (text.substr(i, kMarker.size()) == kMarker) {
            out += ' ';
            i += kMarker.size();
        } else {
            out += text[i++];
        }
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t flags = data[0];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const bool add_special = (flags & 2) != 0;
    const bool parse_special = (flags & 4) != 0;
    const tokenizer::Tokenizer& tokenizer = fuzz::tokenizer_of_model((flags & 1) != 0);

    const std::vector<tokenizer::TokenId> ids = tokenizer.encode(text, add_special, parse_special);
    for (const tokenizer::TokenId id : ids) {
        LADDER_CHECK(id >= 0 && id < tokenizer.vocab_size(), "encode gave an id out of range");
    }
    const std::string decoded = tokenizer.decode(ids);
    tokenizer::StreamingDetokenizer stream(tokenizer);
    std::string streamed;
    for (const tokenizer::TokenId id : ids) streamed += stream.push(id);
    streamed += stream.flush();
    LADDER_CHECK(fuzz::valid_utf8(streamed), "the streaming detokenizer gave bad UTF-8");
    if (!fuzz::valid_utf8(text) || parse_special) return 0;
    // Control tokens render as nothing, so without parse_special the text
    // comes back (SentencePiece's space prefix and marker aside). Byte-level
    // BPE leaves out, as llama.cpp does, bytes its pre-tokenizer's regex does
    // not match (some control characters, unassigned code points, even a
    // lead byte alone): what comes back is the text with those left out, and
    // all of a plain ASCII text.
    const bool space_prefix = tokenizer.vocabulary().add_space_prefix.value_or(false);
    if (tokenizer.vocabulary().model == "gpt2") {
        LADDER_CHECK(is_subsequence(decoded, text), "decode(encode(text)) added to the text");
        if (plain_ascii(text))
            LADDER_CHECK(decoded == text, "decode(encode(text)) is not the text");
    } else if (!space_prefix) {
        // SentencePiece writes spaces as U+2581, so one in the text decodes as a space.
        LADDER_CHECK(decoded == with_space_markers_as_spaces(text),
                     "decode(encode(text)) is not the text");
    }
    if (fuzz::valid_utf8(decoded)) {
        LADDER_CHECK(streamed == decoded, "the streamed text is not the decoded text");
    }
    return 0;
}
