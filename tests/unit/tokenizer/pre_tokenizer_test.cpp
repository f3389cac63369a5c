// The pre-tokenizer regexes per llama.cpp pre name, on hand-checked splits.
#include <gtest/gtest.h>

#include "ladder/tokenizer/pre_tokenizer.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {
namespace {

using Words = std::vector<std::string>;

Words split(const std::string& pre, const std::string& text) {
    return PreTokenizer(pre_tokenizer_spec(pre).patterns).split(text);
}

TEST(PreTokenizer, gpt2_keeps_one_space_with_the_next_word) {
    EXPECT_EQ(split("gpt-2", "Hello world"), (Words{"Hello", " world"}));
    EXPECT_EQ(split("gpt-2", "a   b"), (Words{"a", "  ", " b"}));
    EXPECT_EQ(split("gpt-2", "end   "), (Words{"end", "   "}));
    EXPECT_EQ(split("gpt-2", "x\n\ny"), (Words{"x", "\n", "\n", "y"}));
}

TEST(PreTokenizer, gpt2_contractions_are_lowercase_only) {
    EXPECT_EQ(split("gpt-2", "don't"), (Words{"don", "'t"}));
    EXPECT_EQ(split("gpt-2", "DON'T"), (Words{"DON", "'", "T"}));
    EXPECT_EQ(split("gpt-2", "we'll"), (Words{"we", "'ll"}));
}

TEST(PreTokenizer, smollm_isolates_every_digit_first) {
    EXPECT_EQ(split("smollm", "abc123 x"), (Words{"abc", "1", "2", "3", " x"}));
    // The digit split ends the piece, so the space before a digit stands alone.
    EXPECT_EQ(split("smollm", "a 1"), (Words{"a", " ", "1"}));
    EXPECT_EQ(split("smollm", "x\u00b2"), (Words{"x", "\u00b2"}));  // ² is \p{N}
}

TEST(PreTokenizer, llama3_groups_digits_by_three_and_folds_contraction_case) {
    EXPECT_EQ(split("llama-bpe", "1234567"), (Words{"123", "456", "7"}));
    EXPECT_EQ(split("llama-bpe", "I'M here"), (Words{"I", "'M", " here"}));
    EXPECT_EQ(split("llama-bpe", "a\n\n  b"), (Words{"a", "\n\n", " ", " b"}));
    EXPECT_EQ(split("llama-bpe", "(x)"), (Words{"(x", ")"}));
}

TEST(PreTokenizer, qwen2_isolates_single_digits) {
    EXPECT_EQ(split("qwen2", "abc 123"), (Words{"abc", " ", "1", "2", "3"}));
}

TEST(PreTokenizer, default_splits_punctuation_runs_before_words) {
    EXPECT_EQ(split("default", "hi!!! 1234"), (Words{"hi", "!!!", " ", "123", "4"}));
}

TEST(PreTokenizer, treats_unicode_whitespace_as_llama_cpp_does) {
    // U+0085 is whitespace for llama.cpp (not for PCRE2's own \s).
    EXPECT_EQ(split("gpt-2", "a\u0085\u0085b"), (Words{"a", "\u0085", "\u0085", "b"}));
    EXPECT_EQ(split("gpt-2", "a\u3000b"), (Words{"a", "\u3000", "b"}));
}

TEST(PreTokenizer, invalid_utf8_arrives_as_replacement_characters) {
    EXPECT_EQ(split("gpt-2", "ab\xFF"), (Words{"ab", "\xEF\xBF\xBD"}));
    EXPECT_EQ(split("gpt-2", "\xED\xA0\x80"), (Words{"\xED\xA0\x80"}));
}

TEST(PreTokenizer, rejects_unknown_names) {
    EXPECT_THROW(pre_tokenizer_spec("tekken-9000"), util::InputError);
}

}  // namespace
}  // namespace ladder::tokenizer
