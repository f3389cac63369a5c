// Writer -> reader round trips: every metadata value type, arrays (nested and
// empty), tensors of several dtypes, alignment, v2 and v3, file and memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numeric>

#include "gguf_test_support.h"
#include "ladder/gguf/gguf_writer.h"

namespace ladder::gguf {
namespace {

using tensor::DType;

std::vector<uint8_t> pattern_bytes(size_t n_bytes, uint8_t seed) {
    std::vector<uint8_t> bytes(n_bytes);
    for (size_t i = 0; i < n_bytes; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
    return bytes;
}

TEST(GgufRoundTrip, preserves_every_scalar_type_and_value) {
    GgufWriter writer;
    writer.set("u8", Value::uint8(255));
    writer.set("i8", Value::int8(-128));
    writer.set("u16", Value::uint16(65535));
    writer.set("i16", Value::int16(-32768));
    writer.set("u32", Value::uint32(4294967295u));
    writer.set("i32", Value::int32(std::numeric_limits<int32_t>::min()));
    writer.set("u64", Value::uint64(std::numeric_limits<uint64_t>::max()));
    writer.set("i64", Value::int64(std::numeric_limits<int64_t>::min()));
    writer.set("f32", Value::float32(0.1f));
    writer.set("f64", Value::float64(-1e300));
    writer.set("yes", Value::boolean(true));
    writer.set("no", Value::boolean(false));
    writer.set("empty", Value::string(""));
    writer.set("utf8", Value::string("Ġhello ▁wörld \xF0\x9F\x98\x80"));
    const auto bytes = writer.serialize();
    const auto file = GgufFile::parse(bytes);

    ASSERT_EQ(file->metadata().size(), 14u);
    EXPECT_EQ(file->find("u8")->type, ValueType::UInt8);
    EXPECT_EQ(file->get_int("u8"), 255);
    EXPECT_EQ(file->find("i8")->type, ValueType::Int8);
    EXPECT_EQ(file->get_int("i8"), -128);
    EXPECT_EQ(file->get_int("u16"), 65535);
    EXPECT_EQ(file->get_int("i16"), -32768);
    EXPECT_EQ(file->get_int("u32"), 4294967295LL);
    EXPECT_EQ(file->get_int("i32"), std::numeric_limits<int32_t>::min());
    EXPECT_EQ(std::get<uint64_t>(file->find("u64")->data), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(file->get_int("i64"), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(file->find("f32")->type, ValueType::Float32);
    EXPECT_EQ(file->get_float("f32"), static_cast<double>(0.1f));
    EXPECT_EQ(file->find("f64")->type, ValueType::Float64);
    EXPECT_EQ(file->get_float("f64"), -1e300);
    EXPECT_EQ(file->get_bool("yes"), true);
    EXPECT_EQ(file->get_bool("no"), false);
    EXPECT_EQ(file->get_string("empty"), "");
    EXPECT_EQ(file->get_string("utf8"), "Ġhello ▁wörld \xF0\x9F\x98\x80");
    // Integers read as floats too; absent keys are nullopt.
    EXPECT_EQ(file->get_float("u16"), 65535.0);
    EXPECT_EQ(file->get_int("absent"), std::nullopt);
    EXPECT_EQ(file->get_string_array("absent"), std::nullopt);
}

TEST(GgufRoundTrip, preserves_arrays_including_nested_and_empty) {
    GgufWriter writer;
    writer.set("strings", Value::string_array({"a", "", "Ġt", "<|im_end|>"}));
    writer.set("ints", Value::array(ValueType::Int32, {Value::int32(-1), Value::int32(7)}));
    writer.set("floats",
               Value::array(ValueType::Float32, {Value::float32(0.5f), Value::float32(-2.25f)}));
    writer.set("u8s", Value::array(ValueType::UInt8, {Value::uint8(1), Value::uint8(2)}));
    writer.set("bools", Value::array(ValueType::Bool, {Value::boolean(true)}));
    writer.set("empty", Value::array(ValueType::UInt64, {}));
    writer.set(
        "nested",
        Value::array(
            ValueType::Array,
            {Value::array(ValueType::Int16, {Value::int16(3)}), Value::string_array({"x", "y"}),
             Value::array(ValueType::Array, {Value::array(ValueType::Float64, {})})}));
    const auto bytes = writer.serialize();
    const auto file = GgufFile::parse(bytes);

    EXPECT_EQ(file->get_string_array("strings"),
              (std::vector<std::string>{"a", "", "Ġt", "<|im_end|>"}));
    EXPECT_EQ(file->get_int_array("ints"), (std::vector<int64_t>{-1, 7}));
    EXPECT_EQ(file->get_float_array("floats"), (std::vector<float>{0.5f, -2.25f}));
    EXPECT_EQ(file->get_int_array("u8s"), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(file->find("bools")->as_array()->elements.at(0).as_bool(), true);
    EXPECT_EQ(file->find("empty")->as_array()->element_type, ValueType::UInt64);
    EXPECT_TRUE(file->find("empty")->as_array()->elements.empty());

    const Array* nested = file->find("nested")->as_array();
    ASSERT_NE(nested, nullptr);
    ASSERT_EQ(nested->element_type, ValueType::Array);
    ASSERT_EQ(nested->elements.size(), 3u);
    EXPECT_EQ(nested->elements[0].as_array()->element_type, ValueType::Int16);
    EXPECT_EQ(nested->elements[0].as_array()->elements[0].as_int(), 3);
    EXPECT_EQ(*nested->elements[1].as_array()->elements[1].as_string(), "y");
    const Array* deepest = nested->elements[2].as_array()->elements[0].as_array();
    ASSERT_NE(deepest, nullptr);
    EXPECT_EQ(deepest->element_type, ValueType::Float64);
}

struct TensorSpec {
    const char* name;
    DType dtype;
    std::vector<int64_t> shape;
    size_t n_bytes;
};

// Sizes from ggml's block structs: Q4_1 20 bytes per 32, Q8_0 34 per 32,
// Q4_K 144 per 256, F16 2 per element.
const std::vector<TensorSpec> kTensors = {
    {"token_embd.weight", DType::Q8_0, {64, 3}, 3 * 2 * 34},
    {"blk.0.attn_norm.weight", DType::F32, {5}, 20},
    {"blk.0.ffn_up.weight", DType::Q4_1, {32, 2, 2}, 4 * 20},
    {"blk.0.ffn_down.weight", DType::Q4_K, {256, 1}, 144},
    {"odd.f16", DType::F16, {3, 1, 1, 1}, 6},
};

GgufWriter writer_with_tensors(uint64_t alignment) {
    GgufWriter writer;
    writer.set("general.architecture", Value::string("llama"));
    if (alignment != kDefaultAlignment) writer.set_alignment(alignment);
    uint8_t seed = 1;
    for (const auto& spec : kTensors) {
        writer.add_tensor(spec.name, spec.dtype, spec.shape, pattern_bytes(spec.n_bytes, seed++));
    }
    return writer;
}

void expect_tensors_round_trip(const GgufFile& file, uint64_t alignment) {
    EXPECT_EQ(file.alignment(), alignment);
    EXPECT_EQ(file.data_offset_bytes() % alignment, 0u);
    ASSERT_EQ(file.tensors().size(), kTensors.size());
    uint8_t seed = 1;
    for (size_t i = 0; i < kTensors.size(); ++i) {
        const auto& spec = kTensors[i];
        const TensorInfo& info = file.tensors()[i];
        SCOPED_TRACE(spec.name);
        EXPECT_EQ(info.name, spec.name);
        EXPECT_EQ(info.dtype, spec.dtype);
        EXPECT_EQ(info.shape, spec.shape);
        EXPECT_EQ(info.size_bytes, spec.n_bytes);
        EXPECT_EQ(info.n_elements, std::accumulate(spec.shape.begin(), spec.shape.end(), int64_t{1},
                                                   std::multiplies<>()));
        EXPECT_EQ(info.offset_bytes % alignment, 0u);
        EXPECT_EQ(file.find_tensor(spec.name), &info);
        const auto data = file.tensor_data(info);
        const auto expected = pattern_bytes(spec.n_bytes, seed++);
        EXPECT_TRUE(std::equal(data.begin(), data.end(), expected.begin(), expected.end()));
    }
    EXPECT_EQ(file.find_tensor("missing"), nullptr);
}

TEST(GgufRoundTrip, preserves_tensors_at_default_alignment) {
    const auto bytes = writer_with_tensors(kDefaultAlignment).serialize();
    const auto file = GgufFile::parse(bytes);
    EXPECT_EQ(file->version(), 3u);
    EXPECT_EQ(file->find("general.alignment"), nullptr);
    expect_tensors_round_trip(*file, kDefaultAlignment);
}

TEST(GgufRoundTrip, honours_custom_alignment) {
    for (uint64_t alignment : {1u, 8u, 64u, 4096u}) {
        SCOPED_TRACE(alignment);
        const auto bytes = writer_with_tensors(alignment).serialize();
        const auto file = GgufFile::parse(bytes);
        EXPECT_EQ(file->get_int("general.alignment"), static_cast<int64_t>(alignment));
        expect_tensors_round_trip(*file, alignment);
    }
}

TEST(GgufRoundTrip, tensor_data_is_a_view_into_the_bytes) {
    const auto bytes = writer_with_tensors(kDefaultAlignment).serialize();
    const auto file = GgufFile::parse(bytes);
    const TensorInfo& info = file->tensors().back();
    const auto data = file->tensor_data(info);
    EXPECT_EQ(data.data(), bytes.data() + file->data_offset_bytes() + info.offset_bytes);
}

TEST(GgufRoundTrip, reads_version_2) {
    GgufWriter writer = writer_with_tensors(kDefaultAlignment);
    writer.set_version(2);
    const auto bytes = writer.serialize();
    const auto file = GgufFile::parse(bytes);
    EXPECT_EQ(file->version(), 2u);
    expect_tensors_round_trip(*file, kDefaultAlignment);
}

TEST(GgufRoundTrip, write_file_matches_serialize_and_opens_mapped) {
    const GgufWriter writer = writer_with_tensors(64);
    const auto path = std::filesystem::temp_directory_path() /
                      ("ladder_gguf_round_trip_" + std::to_string(::getpid()) + ".gguf");
    writer.write_file(path.string());
    const auto file = GgufFile::open(path.string());
    EXPECT_EQ(file->name(), path.string());
    expect_tensors_round_trip(*file, 64);
    EXPECT_EQ(std::filesystem::file_size(path), writer.serialize().size());
    std::filesystem::remove(path);
}

TEST(GgufRoundTrip, later_set_replaces_value_in_place) {
    GgufWriter writer;
    writer.set("a", Value::uint32(1));
    writer.set("b", Value::string("x"));
    writer.set("a", Value::string("two"));
    const auto bytes = writer.serialize();
    const auto file = GgufFile::parse(bytes);
    EXPECT_EQ(file->metadata().size(), 2u);
    EXPECT_EQ(file->get_string("a"), "two");
}

TEST(GgufRoundTrip, file_without_tensors_has_no_data_section) {
    GgufWriter writer;
    writer.set("general.architecture", Value::string("llama"));
    const auto bytes = writer.serialize();
    const auto file = GgufFile::parse(bytes);
    EXPECT_TRUE(file->tensors().empty());
    EXPECT_EQ(file->get_string("general.architecture"), "llama");
}

}  // namespace
}  // namespace ladder::gguf
