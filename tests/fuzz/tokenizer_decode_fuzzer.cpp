// Fuzzes decoding on both models' real vocabularies: any ids (in range or
// not) decode or raise util::InputError, and the streaming detokenizer,
// whatever ids it is fed, only ever gives whole, valid UTF-8 characters.
//
// Input: one flags byte (bit 0: Gemma 3, bit 1: render_special, bit 2:
// ids taken as they come, out of range ones included), then 32-bit
// little-endian ids.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_support.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

using namespace ladder;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t flags = data[0];
    const tokenizer::Tokenizer& tokenizer = fuzz::tokenizer_of_model((flags & 1) != 0);
    const bool render_special = (flags & 2) != 0;
    const bool raw_ids = (flags & 4) != 0;
    std::vector<tokenizer::TokenId> ids((size - 1) / 4);
    for (size_t i = 0; i < ids.size(); ++i) {
        uint32_t value = 0;
        std::memcpy(&value, data + 1 + 4 * i, 4);
        ids[i] = raw_ids ? static_cast<tokenizer::TokenId>(value)
                         : static_cast<tokenizer::TokenId>(
                               value % static_cast<uint32_t>(tokenizer.vocab_size()));
    }
    bool in_range = true;
    for (const tokenizer::TokenId id : ids)
        in_range = in_range && id >= 0 && id < tokenizer.vocab_size();
    try {
        (void)tokenizer.decode(ids, render_special);
        LADDER_CHECK(in_range, "decode took an id outside the vocabulary");
    } catch (const util::InputError&) {
        LADDER_CHECK(!in_range, "decode refused ids inside the vocabulary");
        return 0;
    }
    tokenizer::StreamingDetokenizer stream(tokenizer);
    std::string text;
    for (const tokenizer::TokenId id : ids) {
        const std::string delta = stream.push(id);
        LADDER_CHECK(fuzz::valid_utf8(delta), "a streamed delta is not valid UTF-8");
        text += delta;
    }
    LADDER_CHECK(fuzz::valid_utf8(stream.flush()), "the stream's end is not valid UTF-8");
    return 0;
}
