// engine::load_tokenizer reads the tokenizer.ggml.* keys of a GGUF file
// (written in memory here) and reports missing or mistyped keys by file name.
#include <gtest/gtest.h>

#include <thread>

#include "ladder/engine/tokenizer_loader.h"
#include "ladder/gguf/gguf_writer.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {
namespace {

using gguf::Array;
using gguf::Value;
using gguf::ValueType;

Value string_value(std::string s) { return {ValueType::String, std::move(s)}; }
Value u32(uint64_t v) { return {ValueType::UInt32, v}; }
Value boolean(bool b) { return {ValueType::Bool, b}; }

Value string_array(const std::vector<std::string>& items) {
    Array array{ValueType::String, {}};
    for (const auto& item : items) array.elements.push_back(string_value(item));
    return {ValueType::Array, array};
}

Value i32_array(const std::vector<int64_t>& items) {
    Array array{ValueType::Int32, {}};
    for (const auto item : items) array.elements.push_back({ValueType::Int32, item});
    return {ValueType::Array, array};
}

Value f32_array(const std::vector<double>& items) {
    Array array{ValueType::Float32, {}};
    for (const auto item : items) array.elements.push_back({ValueType::Float32, item});
    return {ValueType::Array, array};
}

// A SentencePiece vocabulary: <unk> <s> </s> <end_of_turn> ▁ h i ▁hi hi.
gguf::GgufWriter spm_file() {
    gguf::GgufWriter w;
    w.set("general.architecture", string_value("llama"));
    w.set("tokenizer.ggml.model", string_value("llama"));
    w.set("tokenizer.ggml.tokens", string_array({"<unk>", "<s>", "</s>", "<end_of_turn>",
                                                 "\xE2\x96\x81", "h", "i", "\xE2\x96\x81hi", "hi"}));
    w.set("tokenizer.ggml.scores", f32_array({0, 0, 0, 0, -1, -2, -2, -3, -2.5}));
    w.set("tokenizer.ggml.token_type", i32_array({2, 3, 3, 3, 1, 1, 1, 1, 1}));
    w.set("tokenizer.ggml.bos_token_id", u32(1));
    w.set("tokenizer.ggml.eos_token_id", u32(2));
    w.set("tokenizer.ggml.add_bos_token", boolean(true));
    w.set("tokenizer.ggml.add_space_prefix", boolean(true));
    return w;
}

TEST(TokenizerLoader, reads_vocabulary_ids_and_flags_from_metadata) {
    const auto bytes = spm_file().serialize();
    const auto file = gguf::GgufFile::parse(bytes, "tiny.gguf");
    const auto tok = engine::load_tokenizer(*file);
    EXPECT_EQ(tok->vocab_size(), 9);
    EXPECT_EQ(tok->encode("hi", true, false), (std::vector<TokenId>{1, 7}));
    EXPECT_EQ(tok->encode("hi<end_of_turn>", false, true), (std::vector<TokenId>{7, 3}));
    EXPECT_EQ(tok->vocabulary().eot_id, std::optional<TokenId>(3)) << "found by its text";
    EXPECT_TRUE(tok->is_end_of_generation(3));
    EXPECT_TRUE(tok->is_end_of_generation(2));
}

TEST(TokenizerLoader, names_the_file_when_the_tokenizer_is_missing_or_bad) {
    gguf::GgufWriter empty;
    empty.set("general.architecture", string_value("llama"));
    const auto empty_bytes = empty.serialize();
    const auto no_tokenizer = gguf::GgufFile::parse(empty_bytes, "bare.gguf");
    try {
        engine::load_tokenizer(*no_tokenizer);
        FAIL() << "a file without tokenizer.ggml.model must be rejected";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("bare.gguf"), std::string::npos) << error.what();
    }

    auto w = spm_file();
    w.set("tokenizer.ggml.model", string_value("rwkv"));
    const auto bytes = w.serialize();
    const auto unsupported = gguf::GgufFile::parse(bytes, "rwkv.gguf");
    EXPECT_THROW(engine::load_tokenizer(*unsupported), util::InputError);

    auto typed = spm_file();
    typed.set("tokenizer.ggml.tokens", u32(3));
    const auto typed_bytes = typed.serialize();
    const auto mistyped = gguf::GgufFile::parse(typed_bytes, "typed.gguf");
    EXPECT_THROW(engine::load_tokenizer(*mistyped), util::InputError);
}

TEST(TokenizerLoader, out_of_range_special_ids_fall_back_to_defaults) {
    auto w = spm_file();
    w.set("tokenizer.ggml.bos_token_id", u32(4000000000u));
    const auto bytes = w.serialize();
    const auto file = gguf::GgufFile::parse(bytes, "bad-bos.gguf");
    const auto tok = engine::load_tokenizer(*file);
    EXPECT_EQ(tok->vocabulary().bos_id, std::optional<TokenId>(1)) << "llama.cpp's default";
}

TEST(TokenizerLoader, one_tokenizer_serves_many_threads) {
    const auto bytes = spm_file().serialize();
    const auto file = gguf::GgufFile::parse(bytes, "tiny.gguf");
    const auto tok = engine::load_tokenizer(*file);
    const std::string text = "hi hi hih <end_of_turn> ih hi";
    const auto expected = tok->encode(text, true, true);
    std::vector<std::thread> threads;
    std::vector<int> mismatches(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) mismatches[t] += tok->encode(text, true, true) != expected;
        });
    }
    for (auto& thread : threads) thread.join();
    for (const int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace ladder::tokenizer
