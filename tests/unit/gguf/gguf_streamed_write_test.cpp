// The writer as quantize uses it: tensors declared first and streamed when the
// file is written, ggml's padding after every tensor, metadata order kept,
// and a file that appears whole or not at all.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "gguf_test_support.h"
#include "ladder/gguf/gguf_writer.h"

namespace ladder::gguf {
namespace {

using tensor::DType;
namespace fs = std::filesystem;

class GgufStreamedWrite : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ladder_gguf_streamed_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Entries of the folder, so a left-behind temporary file is seen.
    size_t n_entries() const {
        return static_cast<size_t>(
            std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
    }

    fs::path dir_;
};

GgufWriter two_declared_tensors() {
    GgufWriter writer;
    writer.set("z.first", Value::uint8(1));
    writer.set("a.second", Value::string("x"));
    writer.declare_tensor("t0", DType::F32, {3});       // 12 bytes: padded to 32
    writer.declare_tensor("t1", DType::Q8_0, {32, 2});  // 68 bytes: padded to 96
    return writer;
}

TEST_F(GgufStreamedWrite, streams_declared_tensors_in_pieces_and_pads_every_one) {
    const GgufWriter writer = two_declared_tensors();
    EXPECT_EQ(writer.tensor_size_bytes(0), 12u);
    EXPECT_EQ(writer.tensor_size_bytes(1), 68u);
    const auto path = (dir_ / "out.gguf").string();
    writer.write_file(path, [](size_t index, const GgufWriter::TensorSink& sink) {
        const std::vector<uint8_t> bytes(index == 0 ? 12 : 68, static_cast<uint8_t>(index + 1));
        // In two pieces: a source may hand a tensor over a slab at a time.
        sink(std::span(bytes).first(5));
        sink(std::span(bytes).subspan(5));
    });
    const auto file = GgufFile::open(path);
    ASSERT_EQ(file->tensors().size(), 2u);
    EXPECT_EQ(file->tensors()[1].offset_bytes, 32u);
    EXPECT_EQ(file->tensor_data(file->tensors()[1])[67], 2);
    // ggml pads after the last tensor too.
    EXPECT_EQ(fs::file_size(path), file->data_offset_bytes() + 32 + 96);
    EXPECT_EQ(file->metadata_keys(), (std::vector<std::string>{"z.first", "a.second"}));
}

TEST_F(GgufStreamedWrite, a_failing_source_leaves_no_file_and_keeps_the_old_one) {
    const auto path = dir_ / "out.gguf";
    { std::ofstream(path) << "previous"; }
    const GgufWriter writer = two_declared_tensors();
    EXPECT_THROW(writer.write_file(path.string(),
                                   [](size_t index, const GgufWriter::TensorSink& sink) {
                                       if (index == 1) throw std::runtime_error("bad tensor");
                                       sink(std::vector<uint8_t>(12, 0));
                                   }),
                 std::runtime_error);
    EXPECT_EQ(n_entries(), 1u) << "a temporary file was left behind";
    std::ifstream in(path);
    std::string text;
    in >> text;
    EXPECT_EQ(text, "previous");
}

TEST_F(GgufStreamedWrite, an_unwritable_folder_is_an_input_error) {
    const GgufWriter writer = two_declared_tensors();
    EXPECT_THROW(writer.write_file((dir_ / "missing" / "out.gguf").string(),
                                   [](size_t, const GgufWriter::TensorSink&) {}),
                 util::InputError);
}

TEST_F(GgufStreamedWrite, serialize_matches_the_file) {
    GgufWriter writer;
    writer.set("k", Value::int32(-1));
    writer.add_tensor("t", DType::F16, {5}, std::vector<uint8_t>(10, 7));
    const auto path = (dir_ / "out.gguf").string();
    writer.write_file(path);
    const auto bytes = writer.serialize();
    EXPECT_EQ(fs::file_size(path), bytes.size());
    EXPECT_EQ(bytes.size() % 32, 0u);
}

}  // namespace
}  // namespace ladder::gguf
