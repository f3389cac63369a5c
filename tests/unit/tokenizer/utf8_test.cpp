// The lenient decoder follows llama.cpp's rule; the strict scanner follows
// the Unicode standard's well-formedness table.
#include <gtest/gtest.h>

#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::utf8 {
namespace {

using Cpts = std::vector<uint32_t>;

TEST(Utf8, lenient_decoder_turns_each_bad_byte_into_one_replacement) {
    EXPECT_EQ(decode_lenient("a\xC3\xA9"), (Cpts{'a', 0xE9}));
    EXPECT_EQ(decode_lenient("\x80\xBF"), (Cpts{kReplacement, kReplacement}));
    EXPECT_EQ(decode_lenient("\xE2\x82z"), (Cpts{kReplacement, kReplacement, 'z'}));
    EXPECT_EQ(decode_lenient("\xC3"), (Cpts{kReplacement}));
    EXPECT_EQ(decode_lenient("\xF8\xFF"), (Cpts{kReplacement, kReplacement}));
}

TEST(Utf8, lenient_decoder_accepts_overlongs_and_surrogates_like_llama_cpp) {
    EXPECT_EQ(decode_lenient("\xC0\xAF"), (Cpts{'/'}));
    EXPECT_EQ(decode_lenient("\xED\xA0\x80"), (Cpts{0xD800}));
    EXPECT_EQ(decode_lenient("\xF4\x90\x80\x80"), (Cpts{kReplacement})) << "above U+10FFFF";
}

TEST(Utf8, strict_scanner_reports_complete_incomplete_and_bad_sequences) {
    EXPECT_EQ(strict_sequence_at("a", 0), 1);
    EXPECT_EQ(strict_sequence_at("\xE2\x82\xAC", 0), 3);
    EXPECT_EQ(strict_sequence_at("\xE2\x82", 0), 0);
    EXPECT_EQ(strict_sequence_at("\xE2\x82z", 0), -2);
    EXPECT_EQ(strict_sequence_at("\xC0\xAF", 0), -1) << "overlong lead";
    EXPECT_EQ(strict_sequence_at("\xED\xA0\x80", 0), -1) << "surrogate";
    EXPECT_EQ(strict_sequence_at("\xF4\x90\x80\x80", 0), -1) << "above U+10FFFF";
    EXPECT_EQ(sanitize("ok\xFF\xE2\x82"), "ok\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Utf8, sequence_length_follows_the_lead_byte_nibble) {
    EXPECT_EQ(sequence_length('a'), 1u);
    EXPECT_EQ(sequence_length(0x80), 1u);
    EXPECT_EQ(sequence_length(0xC3), 2u);
    EXPECT_EQ(sequence_length(0xE2), 3u);
    EXPECT_EQ(sequence_length(0xF0), 4u);
    EXPECT_EQ(sequence_length(0xFF), 4u);
}

}  // namespace
}  // namespace ladder::tokenizer::utf8
