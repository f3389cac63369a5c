// Each validation the reader performs, one hostile file per rule: the file is
// rejected with a one-line InputError that names it and the broken field.
#include <gtest/gtest.h>

#include <limits>

#include "gguf_test_support.h"
#include "ladder/gguf/gguf_writer.h"

namespace ladder::gguf {
namespace {

using testing::RawGguf;

constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ4_1 = 3;
constexpr uint32_t kF64 = 28;
constexpr uint32_t kTypeString = static_cast<uint32_t>(ValueType::String);
constexpr uint32_t kTypeArray = static_cast<uint32_t>(ValueType::Array);
constexpr uint64_t kHuge = std::numeric_limits<uint64_t>::max();

// A file with one F32 tensor of n elements, with correct data after it.
RawGguf one_tensor_file(const std::vector<uint64_t>& dims, uint32_t type_id, uint64_t offset,
                        size_t n_data_bytes) {
    RawGguf raw;
    raw.header(1, 0).tensor("w", dims, type_id, offset).pad_to(32).zeros(n_data_bytes);
    return raw;
}

TEST(GgufValidation, rejects_files_too_small_or_with_wrong_magic) {
    EXPECT_GGUF_ERROR(std::vector<uint8_t>{}, "only 0 bytes");
    EXPECT_GGUF_ERROR((std::vector<uint8_t>{'G', 'G'}), "only 2 bytes");
    EXPECT_GGUF_ERROR((std::vector<uint8_t>{'G', 'G', 'M', 'L', 3, 0, 0, 0}), "not a GGUF file");
}

TEST(GgufValidation, rejects_version_1_with_a_clear_message) {
    RawGguf raw;
    raw.header(0, 0, 1);
    EXPECT_GGUF_ERROR(raw.bytes, "version 1 is not supported");
}

TEST(GgufValidation, rejects_unknown_and_big_endian_versions) {
    RawGguf future;
    future.header(0, 0, 4);
    EXPECT_GGUF_ERROR(future.bytes, "unsupported GGUF version 4");
    RawGguf big_endian;
    big_endian.header(0, 0, 0x03000000);
    EXPECT_GGUF_ERROR(big_endian.bytes, "big-endian");
}

TEST(GgufValidation, rejects_truncated_header) {
    RawGguf raw;
    raw.header(0, 0);
    raw.bytes.resize(raw.bytes.size() - 3);
    EXPECT_GGUF_ERROR(raw.bytes, "file ends at byte 21 while reading metadata count");
}

TEST(GgufValidation, rejects_counts_larger_than_the_file_can_hold) {
    RawGguf kv;
    kv.header(0, kHuge).kv_u32("a", 1);
    EXPECT_GGUF_ERROR(kv.bytes, "metadata entries");
    RawGguf tensors;
    tensors.header(1u << 30, 0).tensor("w", {4}, kF32, 0);
    EXPECT_GGUF_ERROR(tensors.bytes, "claims 1073741824 tensors");
}

TEST(GgufValidation, rejects_string_length_beyond_the_file) {
    RawGguf raw;
    raw.header(0, 1).str("general.name").u32(kTypeString).u64(kHuge - 3).zeros(16);
    EXPECT_GGUF_ERROR(raw.bytes, "metadata key 'general.name'");
    EXPECT_GGUF_ERROR(raw.bytes, "but only 16 bytes remain");
}

TEST(GgufValidation, rejects_empty_key_and_unknown_value_type) {
    RawGguf empty_key;
    empty_key.header(0, 1).kv_u32("", 1);
    EXPECT_GGUF_ERROR(empty_key.bytes, "empty key");
    RawGguf unknown;
    unknown.header(0, 1).str("k").u32(13).u32(0);
    EXPECT_GGUF_ERROR(unknown.bytes, "metadata key 'k' has unknown value type 13");
    RawGguf unknown_element;
    unknown_element.header(0, 1).str("k").u32(kTypeArray).u32(99).u64(1).u32(0);
    EXPECT_GGUF_ERROR(unknown_element.bytes, "unknown value type 99");
}

TEST(GgufValidation, rejects_array_count_beyond_the_file) {
    RawGguf raw;
    raw.header(0, 1)
        .str("tokenizer.ggml.tokens")
        .u32(kTypeArray)
        .u32(kTypeString)
        .u64(uint64_t{1} << 40);
    raw.str("a");
    EXPECT_GGUF_ERROR(raw.bytes, "array of 1099511627776 string values");
}

TEST(GgufValidation, rejects_arrays_nested_too_deep) {
    RawGguf raw;
    raw.header(0, 1).str("deep").u32(kTypeArray);
    for (int i = 0; i < 64; ++i) raw.u32(kTypeArray).u64(1);
    raw.u32(kTypeString).u64(0);
    EXPECT_GGUF_ERROR(raw.bytes, "nests arrays more than 8 deep");
}

TEST(GgufValidation, rejects_bool_other_than_0_or_1) {
    RawGguf raw;
    raw.header(0, 1).str("flag").u32(static_cast<uint32_t>(ValueType::Bool)).u8(7);
    EXPECT_GGUF_ERROR(raw.bytes, "metadata key 'flag' has a bool stored as 7");
}

TEST(GgufValidation, rejects_duplicate_keys_and_escapes_control_bytes) {
    RawGguf raw;
    raw.header(0, 2).kv_u32("a\nb", 1).kv_u32("a\nb", 2);
    EXPECT_GGUF_ERROR(raw.bytes, "metadata key 'a\\x0ab' appears twice");
}

TEST(GgufValidation, rejects_alignment_that_is_not_a_nonzero_power_of_two) {
    for (uint32_t alignment : {0u, 3u, 48u}) {
        RawGguf raw;
        raw.header(0, 1).kv_u32("general.alignment", alignment);
        EXPECT_GGUF_ERROR(raw.bytes, "expected a nonzero power of two");
    }
    RawGguf wrong_type;
    wrong_type.header(0, 1).str("general.alignment").u32(kTypeString).str("32");
    EXPECT_GGUF_ERROR(wrong_type.bytes, "general.alignment is a string");
}

TEST(GgufValidation, rejects_bad_dimension_counts) {
    EXPECT_GGUF_ERROR(one_tensor_file({}, kF32, 0, 0).bytes, "tensor 'w' has 0 dimensions");
    EXPECT_GGUF_ERROR(one_tensor_file({1, 1, 1, 1, 1}, kF32, 0, 4).bytes,
                      "tensor 'w' has 5 dimensions, expected 1 to 4");
}

TEST(GgufValidation, rejects_element_count_and_size_overflow) {
    EXPECT_GGUF_ERROR(one_tensor_file({uint64_t{1} << 31, uint64_t{1} << 31, 4}, kF32, 0, 0).bytes,
                      "element count overflows");
    EXPECT_GGUF_ERROR(one_tensor_file({kHuge}, kF32, 0, 0).bytes, "element count overflows");
    // 2^62 elements fit an int64, but 2^62 * 8 bytes do not fit a uint64.
    EXPECT_GGUF_ERROR(one_tensor_file({uint64_t{1} << 62}, kF64, 0, 0).bytes,
                      "size in bytes overflows");
}

TEST(GgufValidation, rejects_unknown_tensor_type) {
    EXPECT_GGUF_ERROR(one_tensor_file({4}, 4, 0, 16).bytes, "tensor 'w' has unknown type id 4");
    EXPECT_GGUF_ERROR(one_tensor_file({4}, 1000, 0, 16).bytes, "unknown type id 1000");
}

TEST(GgufValidation, rejects_rows_that_are_not_whole_blocks) {
    EXPECT_GGUF_ERROR(one_tensor_file({33, 2}, kQ4_1, 0, 64).bytes,
                      "rows of 33 elements, not a whole number of Q4_1 blocks of 32");
}

TEST(GgufValidation, rejects_misaligned_tensor_offset) {
    EXPECT_GGUF_ERROR(one_tensor_file({4}, kF32, 16, 64).bytes,
                      "tensor 'w' data offset 16 is not a multiple of the alignment 32");
}

TEST(GgufValidation, rejects_tensor_data_beyond_the_file) {
    // Header 24 + name 9 + n_dims 4 + dim 8 + type 4 + offset 8 = 57, padded to 64.
    const auto raw = one_tensor_file({4}, kF32, 0, 15);
    EXPECT_GGUF_ERROR(raw.bytes, "tensor 'w' data ends at byte 80 beyond the file size 79");
    EXPECT_GGUF_ERROR(one_tensor_file({4}, kF32, kHuge - 31, 16).bytes, "tensor 'w' data offset");
}

TEST(GgufValidation, rejects_data_section_beyond_the_file) {
    RawGguf raw;
    raw.header(1, 0).tensor("w", {0}, kF32, 0);
    EXPECT_GGUF_ERROR(raw.bytes, "data section starts at byte 64 beyond the file size 57");
}

TEST(GgufValidation, rejects_overlapping_tensors) {
    RawGguf raw;
    raw.header(2, 0).tensor("a", {16}, kF32, 32).tensor("b", {16}, kF32, 0).pad_to(32).zeros(96);
    EXPECT_GGUF_ERROR(raw.bytes, "tensors 'b' and 'a' overlap");
}

TEST(GgufValidation, rejects_duplicate_and_empty_tensor_names) {
    RawGguf duplicate;
    duplicate.header(2, 0)
        .tensor("w", {4}, kF32, 0)
        .tensor("w", {4}, kF32, 32)
        .pad_to(32)
        .zeros(64);
    EXPECT_GGUF_ERROR(duplicate.bytes, "tensor 'w' appears twice");
    RawGguf empty;
    empty.header(1, 0).tensor("", {4}, kF32, 0).pad_to(32).zeros(16);
    EXPECT_GGUF_ERROR(empty.bytes, "tensor info #0 has an empty name");
}

TEST(GgufValidation, accepts_zero_sized_dimensions_as_empty_tensors) {
    const auto raw = one_tensor_file({0, 3}, kQ4_1, 0, 0);
    const auto file = GgufFile::parse(raw.bytes);
    ASSERT_EQ(file->tensors().size(), 1u);
    EXPECT_EQ(file->tensors()[0].n_elements, 0);
    EXPECT_EQ(file->tensors()[0].size_bytes, 0u);
    EXPECT_TRUE(file->tensor_data(file->tensors()[0]).empty());
}

TEST(GgufValidation, truncation_error_names_the_field_and_position) {
    GgufWriter writer;
    writer.set("general.name", Value::string("SmolLM2"));
    auto bytes = writer.serialize();
    bytes.resize(bytes.size() - 2);
    EXPECT_GGUF_ERROR(bytes, "of metadata key 'general.name'");
}

TEST(GgufValidation, typed_getters_report_wrong_types_as_input_errors) {
    GgufWriter writer;
    writer.set("name", Value::string("x"));
    writer.set("count", Value::uint32(3));
    writer.set("big", Value::uint64(kHuge));
    writer.set("ints", Value::array(ValueType::Int32, {Value::int32(1)}));
    writer.set("big_ints", Value::array(ValueType::UInt64, {Value::uint64(kHuge)}));
    const auto bytes = writer.serialize();
    const auto file = GgufFile::parse(bytes, "m.gguf");
    const auto message_of = [](auto&& call) -> std::string {
        try {
            call();
        } catch (const util::InputError& error) {
            return error.what();
        }
        return "no error";
    };
    EXPECT_EQ(message_of([&] { file->get_int("name"); }),
              "m.gguf: metadata key 'name' is a string, expected an integer");
    EXPECT_EQ(message_of([&] { file->get_string("count"); }),
              "m.gguf: metadata key 'count' is a uint32, expected a string");
    EXPECT_EQ(message_of([&] { file->get_bool("count"); }),
              "m.gguf: metadata key 'count' is a uint32, expected a bool");
    EXPECT_EQ(message_of([&] { file->get_float("name"); }),
              "m.gguf: metadata key 'name' is a string, expected a number");
    EXPECT_NE(message_of([&] { file->get_int("big"); }).find("too large"), std::string::npos);
    EXPECT_EQ(message_of([&] { file->get_string_array("ints"); }),
              "m.gguf: metadata key 'ints' is an array of int32, expected an array of strings");
    EXPECT_EQ(message_of([&] { file->get_int_array("name"); }),
              "m.gguf: metadata key 'name' is a string, expected an array");
    EXPECT_NE(message_of([&] { file->get_int_array("big_ints"); }).find("too large"),
              std::string::npos);
}

}  // namespace
}  // namespace ladder::gguf
