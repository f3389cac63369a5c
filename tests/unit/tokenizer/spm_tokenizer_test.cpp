// SentencePiece BPE on a tiny vocabulary: score order, byte fallback, the
// space marker and the add-space-prefix rule.
#include <gtest/gtest.h>

#include "ladder/tokenizer/tokenizer.h"
#include "synthetic_vocabularies.h"

namespace ladder::tokenizer {
namespace {

using testing::spm_byte_id;
using testing::tiny_spm;
using Ids = std::vector<TokenId>;

// Pieces get ids from 259 on, in this order.
constexpr TokenId kSpace = 259, kH = 260, kI = 261, kHi = 262, kSpaceHi = 263, kIi = 264;

Vocabulary hi_vocabulary() {
    return tiny_spm({{"\xE2\x96\x81", -1.0f},
                     {"h", -2.0f},
                     {"i", -2.0f},
                     {"hi", -3.0f},
                     {"\xE2\x96\x81hi", -4.0f},
                     {"ii", -0.5f}});
}

TEST(SpmTokenizer, merges_highest_score_first) {
    auto v = hi_vocabulary();
    v.add_space_prefix = false;
    auto tok = Tokenizer::create(std::move(v));
    EXPECT_EQ(tok->encode("hi", false, false), (Ids{kHi}));
    // "ii" (-0.5) beats "hi" (-3) in "hii".
    EXPECT_EQ(tok->encode("hii", false, false), (Ids{kH, kIi}));
    EXPECT_EQ(tok->encode(" hi", false, false), (Ids{kSpaceHi}));
}

TEST(SpmTokenizer, adds_space_prefix_at_start_and_after_special_tokens) {
    auto v = hi_vocabulary();
    v.add_space_prefix.reset();  // SentencePiece default: on
    auto tok = Tokenizer::create(std::move(v));
    EXPECT_EQ(tok->encode("hi", false, false), (Ids{kSpaceHi}));
    EXPECT_EQ(tok->encode("hi", true, false), (Ids{1, kSpaceHi})) << "add_bos defaults to true";
    EXPECT_EQ(tok->encode("hi</s>hi", false, true), (Ids{kSpaceHi, 2, kSpaceHi}));
    EXPECT_EQ(tok->encode("hi</s>hi", false, false).front(), kSpaceHi);
}

TEST(SpmTokenizer, falls_back_to_byte_tokens) {
    auto v = hi_vocabulary();
    v.add_space_prefix = false;
    auto tok = Tokenizer::create(std::move(v));
    EXPECT_EQ(tok->encode("h\xC3\xA9", false, false),
              (Ids{kH, spm_byte_id(0xC3), spm_byte_id(0xA9)}));
    EXPECT_EQ(tok->decode(tok->encode("h\xC3\xA9 hi", false, false)), "h\xC3\xA9 hi");
    // An invalid lead byte takes the next bytes into its symbol, as llama.cpp
    // does, so "i" after it is spelled as a byte too.
    EXPECT_EQ(tok->encode("\xE4ii", false, false),
              (Ids{spm_byte_id(0xE4), spm_byte_id('i'), spm_byte_id('i')}));
}

TEST(SpmTokenizer, renders_space_marker_as_space) {
    auto tok = Tokenizer::create(hi_vocabulary());
    EXPECT_EQ(tok->token_to_piece(kSpaceHi), " hi");
    EXPECT_EQ(tok->token_to_piece(spm_byte_id('A')), "A");
    EXPECT_EQ(tok->token_to_piece(1), "");
    EXPECT_EQ(tok->token_to_piece(1, true), "<s>");
}

TEST(SpmTokenizer, resolves_llama_defaults_for_special_ids) {
    auto tok = Tokenizer::create(hi_vocabulary());
    const Vocabulary& v = tok->vocabulary();
    EXPECT_EQ(v.bos_id, std::optional<TokenId>(1));
    EXPECT_EQ(v.eos_id, std::optional<TokenId>(2));
    EXPECT_EQ(v.unknown_id, std::optional<TokenId>(0));
    EXPECT_TRUE(tok->is_end_of_generation(2));
    EXPECT_TRUE(*v.add_space_prefix);
}

}  // namespace
}  // namespace ladder::tokenizer
