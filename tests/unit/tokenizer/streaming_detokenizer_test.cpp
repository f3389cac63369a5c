// StreamingDetokenizer: characters split across byte tokens are held back,
// and its output is valid UTF-8 whatever the tokens are.
#include <gtest/gtest.h>

#include "ladder/tokenizer/tokenizer.h"
#include "ladder/tokenizer/utf8.h"
#include "synthetic_vocabularies.h"

namespace ladder::tokenizer {
namespace {

using testing::spm_byte_id;

std::unique_ptr<Tokenizer> byte_tokenizer() {
    auto v = testing::tiny_spm({{"\xE2\x96\x81hi", -1.0f}});
    v.add_space_prefix = false;
    return Tokenizer::create(std::move(v));
}

std::string stream(const Tokenizer& tok, const std::vector<uint8_t>& bytes) {
    StreamingDetokenizer detok(tok);
    std::string out;
    for (const uint8_t b : bytes) out += detok.push(spm_byte_id(b));
    return out + detok.flush();
}

TEST(StreamingDetokenizer, holds_back_a_character_until_its_last_byte) {
    const auto tok = byte_tokenizer();
    StreamingDetokenizer detok(*tok);
    EXPECT_EQ(detok.push(spm_byte_id(0xE2)), "");
    EXPECT_EQ(detok.push(spm_byte_id(0x82)), "");
    EXPECT_EQ(detok.push(spm_byte_id(0xAC)), "\xE2\x82\xAC");  // €
    EXPECT_EQ(detok.push(259), " hi");
    EXPECT_EQ(detok.flush(), "");
}

TEST(StreamingDetokenizer, emits_a_four_byte_emoji_whole) {
    const auto tok = byte_tokenizer();
    StreamingDetokenizer detok(*tok);
    std::string out;
    for (const uint8_t b : {0xF0, 0x9F, 0x98}) {
        out = detok.push(spm_byte_id(b));
        EXPECT_EQ(out, "");
    }
    EXPECT_EQ(detok.push(spm_byte_id(0x80)), "\xF0\x9F\x98\x80");
}

TEST(StreamingDetokenizer, replaces_bytes_that_can_never_complete) {
    const auto tok = byte_tokenizer();
    StreamingDetokenizer detok(*tok);
    EXPECT_EQ(detok.push(spm_byte_id(0xFF)), "\xEF\xBF\xBD") << "0xFF is never valid";
    EXPECT_EQ(detok.push(spm_byte_id(0xC3)), "");
    EXPECT_EQ(detok.push(spm_byte_id('a')), "\xEF\xBF\xBD" "a") << "lead byte then ASCII";
    EXPECT_EQ(detok.push(spm_byte_id(0xED)), "");
    EXPECT_EQ(detok.push(spm_byte_id(0xA0)), "\xEF\xBF\xBD\xEF\xBF\xBD") << "no surrogates";
    EXPECT_EQ(detok.push(spm_byte_id(0xE2)), "");
    EXPECT_EQ(detok.flush(), "\xEF\xBF\xBD") << "an unfinished character at the end";
}

TEST(StreamingDetokenizer, output_is_valid_utf8_for_any_byte_sequence) {
    const auto tok = byte_tokenizer();
    uint32_t state = 12345;
    for (int round = 0; round < 200; ++round) {
        std::vector<uint8_t> bytes;
        for (int i = 0; i < 24; ++i) {
            state = state * 1664525u + 1013904223u;
            // Mostly lead and continuation bytes, where the trouble is.
            const uint8_t b = static_cast<uint8_t>(state >> 24);
            bytes.push_back(round % 2 ? (0x80 | b) : b);
        }
        const std::string out = stream(*tok, bytes);
        ASSERT_EQ(utf8::sanitize(out), out) << "round " << round;
    }
}

TEST(StreamingDetokenizer, matches_decode_for_valid_text) {
    const auto tok = byte_tokenizer();
    const std::string text = "h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80!";
    const std::vector<uint8_t> bytes(text.begin(), text.end());
    EXPECT_EQ(stream(*tok, bytes), text);
}

}  // namespace
}  // namespace ladder::tokenizer
