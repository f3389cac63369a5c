// Byte-level BPE on tiny vocabularies: merge order, byte mapping, special
// tokens, BOS/EOS rules and invalid input.
#include <gtest/gtest.h>

#include "ladder/tokenizer/tokenizer.h"
#include "ladder/tokenizer/utf8.h"
#include "ladder/util/error.h"
#include "synthetic_vocabularies.h"

namespace ladder::tokenizer {
namespace {

using testing::byte_id;
using testing::tiny_bpe;
using Ids = std::vector<TokenId>;

constexpr TokenId kFirstMerged = 4 + 256;

TEST(BpeTokenizer, merges_lowest_rank_first) {
    // "b c" outranks "a b", so "abc" becomes a + bc, then abc.
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {"b c", "a b", "a bc"}));
    EXPECT_EQ(tok->encode("abc", false, false), (Ids{kFirstMerged + 2}));
    EXPECT_EQ(tok->encode("ab", false, false), (Ids{kFirstMerged + 1}));
    // With "a b" first, "ab" + "c" has no merge: two tokens.
    auto other = Tokenizer::create(tiny_bpe("gpt-2", {"a b", "b c", "a bc"}));
    EXPECT_EQ(other->encode("abc", false, false), (Ids{kFirstMerged, byte_id('c')}));
}

TEST(BpeTokenizer, equal_pairs_merge_leftmost_first) {
    // "aaa": both pairs are "a a"; the left one merges, leaving aa + a.
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {"a a"}));
    EXPECT_EQ(tok->encode("aaa", false, false), (Ids{kFirstMerged, byte_id('a')}));
    EXPECT_EQ(tok->encode("aaaa", false, false), (Ids{kFirstMerged, kFirstMerged}));
}

TEST(BpeTokenizer, spells_bytes_with_gpt2_unicode_mapping) {
    EXPECT_EQ(byte_to_unicode(' '), "\xC4\xA0");   // Ġ
    EXPECT_EQ(byte_to_unicode('\n'), "\xC4\x8A");  // Ċ
    EXPECT_EQ(byte_to_unicode('a'), "a");
    for (int b = 0; b < 256; ++b) {
        const auto cpts = utf8::decode_lenient(byte_to_unicode(static_cast<uint8_t>(b)));
        ASSERT_EQ(cpts.size(), 1u) << b;
        ASSERT_EQ(unicode_to_byte(cpts[0]), std::optional<uint8_t>(static_cast<uint8_t>(b))) << b;
    }
    // A space merges with the word after it: " a" is one merged token.
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {"\xC4\xA0 a"}));
    EXPECT_EQ(tok->encode(" a", false, false), (Ids{kFirstMerged}));
    EXPECT_EQ(tok->token_to_piece(kFirstMerged), " a");
    EXPECT_EQ(tok->decode(tok->encode("x\n y", false, false)), "x\n y");
}

TEST(BpeTokenizer, smollm_splits_digits_one_by_one) {
    auto tok = Tokenizer::create(tiny_bpe("smollm", {"1 2", "12 3"}));
    EXPECT_EQ(tok->encode("123", false, false), (Ids{byte_id('1'), byte_id('2'), byte_id('3')}));
    auto gpt2 = Tokenizer::create(tiny_bpe("gpt-2", {"1 2", "12 3"}));
    EXPECT_EQ(gpt2->encode("123", false, false), (Ids{kFirstMerged + 1}));
}

TEST(BpeTokenizer, words_do_not_merge_across_pre_tokenizer_splits) {
    // "a" and "b" are separate words in "a.b" (letters vs punctuation).
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {"a .", "a b"}));
    EXPECT_EQ(tok->encode("a.b", false, false),
              (Ids{byte_id('a'), byte_id('.'), byte_id('b')}));
    EXPECT_EQ(tok->encode("ab", false, false), (Ids{kFirstMerged + 1}));
}

TEST(BpeTokenizer, control_tokens_need_parse_special_but_user_defined_do_not) {
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {}));
    const Ids parsed = tok->encode("<|im_start|>x<tool>", false, true);
    EXPECT_EQ(parsed, (Ids{1, byte_id('x'), 3}));
    const Ids plain = tok->encode("<|im_start|>x<tool>", false, false);
    ASSERT_GT(plain.size(), 3u);
    EXPECT_EQ(plain.front(), byte_id('<'));
    EXPECT_EQ(plain.back(), 3) << "user-defined tokens are matched even without parse_special";
}

TEST(BpeTokenizer, longer_special_token_wins_where_they_overlap) {
    auto v = tiny_bpe("gpt-2", {});
    v.tokens.push_back("<|im_start|>x");
    v.kinds.push_back(TokenKind::Control);
    const TokenId longer = static_cast<TokenId>(v.tokens.size() - 1);
    auto tok = Tokenizer::create(std::move(v));
    EXPECT_EQ(tok->encode("<|im_start|>x<|im_start|>y", false, true),
              (Ids{longer, 1, byte_id('y')}));
}

TEST(BpeTokenizer, adds_bos_and_eos_only_as_the_vocabulary_says) {
    auto v = tiny_bpe("gpt-2", {});
    v.bos_id = 1;
    v.eos_id = 2;
    v.add_bos = true;
    v.add_eos = true;
    auto tok = Tokenizer::create(std::move(v));
    EXPECT_EQ(tok->encode("a", true, false), (Ids{1, byte_id('a'), 2}));
    EXPECT_EQ(tok->encode("a", false, false), (Ids{byte_id('a')}));
    EXPECT_EQ(tok->encode("", true, false), (Ids{1, 2}));
}

TEST(BpeTokenizer, llama_bpe_adds_bos_by_default) {
    auto v = tiny_bpe("llama-bpe", {});
    v.add_bos.reset();
    auto tok = Tokenizer::create(std::move(v));
    EXPECT_EQ(tok->encode("a", true, false), (Ids{0, byte_id('a')}));
    EXPECT_TRUE(*tok->vocabulary().add_bos);
}

TEST(BpeTokenizer, invalid_utf8_becomes_replacement_characters) {
    // llama.cpp decodes each bad byte as U+FFFD (EF BF BD) before the
    // byte-level mapping.
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {}));
    EXPECT_EQ(tok->encode("\xFF", false, false),
              (Ids{byte_id('\xEF'), byte_id('\xBF'), byte_id('\xBD')}));
    EXPECT_EQ(tok->decode(tok->encode("a\x80z", false, false)), "a\xEF\xBF\xBDz");
    // Above U+10FFFF (where llama.cpp throws) it is one U+FFFD too.
    EXPECT_EQ(tok->decode(tok->encode("\xF7\xBF\xBF\xBF", false, false)), "\xEF\xBF\xBD");
    // A surrogate passes through unchanged, as in llama.cpp.
    EXPECT_EQ(tok->decode(tok->encode("\xED\xA0\x80", false, false)), "\xED\xA0\x80");
}

TEST(BpeTokenizer, renders_control_tokens_only_when_asked) {
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {}));
    EXPECT_EQ(tok->token_to_piece(2), "");
    EXPECT_EQ(tok->token_to_piece(2, true), "<|im_end|>");
    EXPECT_EQ(tok->token_to_piece(3), "<tool>") << "user-defined tokens always render";
    EXPECT_THROW(tok->token_to_piece(-1), util::InputError);
    EXPECT_THROW(tok->token_to_piece(tok->vocab_size()), util::InputError);
}

TEST(BpeTokenizer, finds_end_of_turn_by_text_when_the_file_has_no_id) {
    auto tok = Tokenizer::create(tiny_bpe("gpt-2", {}));
    EXPECT_EQ(tok->vocabulary().eot_id, std::optional<TokenId>(2));  // <|im_end|>
    EXPECT_TRUE(tok->is_end_of_generation(2));
    EXPECT_TRUE(tok->is_end_of_generation(0));  // <|endoftext|>, also the EOS
    EXPECT_FALSE(tok->is_end_of_generation(1));
    EXPECT_EQ(tok->find_token("<|im_end|>"), 2);
    EXPECT_EQ(tok->find_token("no such token"), -1);
}

TEST(BpeTokenizer, rejects_unknown_models_and_pre_tokenizers) {
    auto bad_pre = tiny_bpe("no-such-pre", {});
    EXPECT_THROW(Tokenizer::create(std::move(bad_pre)), util::InputError);
    auto bad_model = tiny_bpe("gpt-2", {});
    bad_model.model = "bert";
    EXPECT_THROW(Tokenizer::create(std::move(bad_model)), util::InputError);
    auto duplicate = tiny_bpe("gpt-2", {});
    duplicate.tokens.push_back("a");
    duplicate.kinds.push_back(TokenKind::Normal);
    EXPECT_THROW(Tokenizer::create(std::move(duplicate)), util::InputError);
    auto no_bos = tiny_bpe("gpt-2", {});
    no_bos.bos_id = 100000;
    no_bos.tokens.resize(5);  // the default BOS id 11 is out of range too
    no_bos.kinds.resize(5);
    no_bos.add_bos = true;
    EXPECT_THROW(Tokenizer::create(std::move(no_bos)), util::InputError);
}

}  // namespace
}  // namespace ladder::tokenizer
