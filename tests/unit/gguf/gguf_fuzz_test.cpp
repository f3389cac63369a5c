// Seeded corruption loops: truncated, bit-flipped and overwritten variants of
// valid files must each parse or throw InputError; never crash or read out of
// bounds (these tests run under AddressSanitizer in `make test-asan`).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "gguf_test_support.h"
#include "ladder/gguf/gguf_writer.h"

namespace ladder::gguf {
namespace {

using tensor::DType;

constexpr uint32_t kSeed = 20240611;

std::vector<uint8_t> rich_file() {
    GgufWriter writer;
    writer.set("general.architecture", Value::string("llama"));
    writer.set("general.alignment", Value::uint32(16));
    writer.set("llama.block_count", Value::uint32(2));
    writer.set("llama.rope.freq_base", Value::float32(10000.0f));
    writer.set("i8", Value::int8(-3));
    writer.set("u16", Value::uint16(7));
    writer.set("i64", Value::int64(-9));
    writer.set("f64", Value::float64(2.5));
    writer.set("flag", Value::boolean(true));
    writer.set("tokenizer.ggml.tokens", Value::string_array({"<s>", "</s>", "a", "Ġb", "cd"}));
    writer.set("tokenizer.ggml.scores",
               Value::array(ValueType::Float32, {Value::float32(0), Value::float32(-1)}));
    writer.set("nested",
               Value::array(ValueType::Array, {Value::array(ValueType::Int32, {Value::int32(1)}),
                                               Value::string_array({"x"})}));
    std::vector<uint8_t> f32(4 * 8, 0x3f);
    std::vector<uint8_t> q41(2 * 20, 0x11);
    std::vector<uint8_t> q80(34, 0x22);
    writer.add_tensor("blk.0.attn_norm.weight", DType::F32, {8}, f32);
    writer.add_tensor("blk.0.ffn_up.weight", DType::Q4_1, {32, 2}, q41);
    writer.add_tensor("token_embd.weight", DType::Q8_0, {32, 1}, q80);
    return writer.serialize();
}

// Parses a variant; a parsed file is then fully walked so views into it are
// exercised. Any exception other than InputError escapes and fails the test.
bool parses(const std::vector<uint8_t>& bytes) {
    std::unique_ptr<GgufFile> file;
    try {
        file = GgufFile::parse(bytes, testing::kTestName);
    } catch (const util::InputError& error) {
        const std::string message = error.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_EQ(message.rfind(std::string(testing::kTestName) + ": ", 0), 0u) << message;
        return false;
    }
    uint64_t checksum = 0;
    for (const TensorInfo& info : file->tensors()) {
        for (uint8_t byte : file->tensor_data(info)) checksum += byte;
    }
    for (const auto& [key, value] : file->metadata())
        checksum += key.size() + value.as_int().value_or(0);
    EXPECT_GE(checksum, 0u);
    return true;
}

// Flips n random bits within bytes [begin, end).
void flip_bits(std::vector<uint8_t>& bytes, std::mt19937& rng, int n_flips, size_t begin,
               size_t end) {
    std::uniform_int_distribution<size_t> position(begin, end - 1);
    std::uniform_int_distribution<int> bit(0, 7);
    for (int i = 0; i < n_flips; ++i) bytes[position(rng)] ^= static_cast<uint8_t>(1u << bit(rng));
}

// Overwrites an 8-byte window with a value that makes counts, lengths and
// offsets hostile: zero, all ones, the sign bit, or a small number.
void overwrite_word(std::vector<uint8_t>& bytes, std::mt19937& rng) {
    const uint64_t values[] = {0, ~uint64_t{0}, uint64_t{1} << 63, uint64_t{1} << 32,
                               5, 0xffffffff};
    std::uniform_int_distribution<size_t> position(0, bytes.size() - 8);
    std::uniform_int_distribution<size_t> pick(0, std::size(values) - 1);
    std::memcpy(bytes.data() + position(rng), &values[pick(rng)], 8);
}

TEST(GgufFuzz, every_truncation_of_a_valid_file_is_rejected_cleanly) {
    const auto original = rich_file();
    ASSERT_TRUE(parses(original));
    // The file ends with the last tensor's padding (as ggml writes it): a
    // prefix that cuts only padding is complete, any shorter one is not.
    const auto file = GgufFile::parse(original);
    const TensorInfo& last = file->tensors().back();
    const size_t data_end = file->data_offset_bytes() + last.offset_bytes + last.size_bytes;
    ASSERT_LT(data_end, original.size());
    for (size_t length = 0; length < original.size(); ++length) {
        const std::vector<uint8_t> truncated(original.begin(), original.begin() + length);
        SCOPED_TRACE(length);
        EXPECT_EQ(parses(truncated), length >= data_end);
    }
}

TEST(GgufFuzz, bit_flipped_and_overwritten_files_parse_or_throw_input_error) {
    const auto original = rich_file();
    std::mt19937 rng(kSeed);
    int n_rejected = 0;
    constexpr int kVariants = 600;
    for (int i = 0; i < kVariants; ++i) {
        auto variant = original;
        if (i % 3 == 2) {
            overwrite_word(variant, rng);
        } else {
            flip_bits(variant, rng, 1 + i % 4, 0, variant.size());
        }
        SCOPED_TRACE(i);
        if (!parses(variant)) ++n_rejected;
    }
    // Most corruptions land in tensor data (and parse); many must be caught.
    EXPECT_GT(n_rejected, kVariants / 10) << "suspiciously few corruptions detected";
}

// The start of the real model: the whole metadata (a 49k-token vocabulary)
// and the tensor infos, cut short inside the tensor data.
std::vector<uint8_t> real_model_prefix(size_t n_bytes) {
    const std::filesystem::path path =
        std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::vector<uint8_t> bytes(n_bytes);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n_bytes));
    bytes.resize(static_cast<size_t>(in.gcount()));
    return bytes;
}

TEST(GgufFuzz, corrupted_prefixes_of_the_real_model_never_crash) {
    constexpr size_t kPrefixBytes = 2 << 20;
    // Where the tensor infos end (gguf-py: data section offset 1785664); the
    // 272 infos take the ~16 KiB before it. Random flips elsewhere mostly land
    // in token strings, so the flips aim at the header and the tensor infos.
    constexpr size_t kTensorInfoEnd = 1785664;
    constexpr size_t kTensorInfoBegin = kTensorInfoEnd - 16384;
    const auto prefix = real_model_prefix(kPrefixBytes);
    if (prefix.size() < kPrefixBytes) GTEST_SKIP() << "default model not present";
    std::mt19937 rng(kSeed);
    std::uniform_int_distribution<size_t> cut(0, prefix.size());
    // Each parse reads ~150k metadata values: a few variants keep this test
    // under a few seconds with AddressSanitizer.
    for (int i = 0; i < 10; ++i) {
        auto variant = prefix;
        switch (i % 4) {
            case 0: variant.resize(cut(rng)); break;
            case 1: overwrite_word(variant, rng); break;
            case 2: flip_bits(variant, rng, 2, 0, 256); break;
            default: flip_bits(variant, rng, 3, kTensorInfoBegin, kTensorInfoEnd); break;
        }
        SCOPED_TRACE(i);
        // The prefix lacks most tensor data, so every variant must be rejected.
        EXPECT_FALSE(parses(variant));
    }
}

}  // namespace
}  // namespace ladder::gguf
