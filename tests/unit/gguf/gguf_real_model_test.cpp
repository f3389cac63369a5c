// Reads the default model (when fetched) and checks it against facts read
// independently with gguf-py's GGUFReader: counts, offsets, shapes, values.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "ladder/gguf/gguf_file.h"

namespace ladder::gguf {
namespace {

using tensor::DType;

std::string model_path() {
    return (std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf")
        .string();
}

class GgufRealModel : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (std::filesystem::exists(model_path())) file_ = GgufFile::open(model_path()).release();
    }
    static void TearDownTestSuite() {
        delete file_;
        file_ = nullptr;
    }
    void SetUp() override {
        if (file_ == nullptr) GTEST_SKIP() << "default model not present; run `make model`";
    }
    static GgufFile* file_;
};

GgufFile* GgufRealModel::file_ = nullptr;

TEST_F(GgufRealModel, reads_header_and_hyperparameters) {
    EXPECT_EQ(file_->version(), 3u);
    EXPECT_EQ(file_->alignment(), 32u);
    EXPECT_EQ(file_->data_offset_bytes(), 1785664u);
    EXPECT_EQ(file_->metadata().size(), 33u);
    EXPECT_EQ(file_->get_string("general.architecture"), "llama");
    EXPECT_EQ(file_->get_int("llama.block_count"), 30);
    EXPECT_EQ(file_->get_int("llama.embedding_length"), 576);
    EXPECT_EQ(file_->get_int("llama.feed_forward_length"), 1536);
    EXPECT_EQ(file_->get_int("llama.attention.head_count"), 9);
    EXPECT_EQ(file_->get_int("llama.attention.head_count_kv"), 3);
    EXPECT_EQ(file_->get_float("llama.rope.freq_base"), 100000.0);
    EXPECT_EQ(file_->get_float("llama.attention.layer_norm_rms_epsilon"),
              static_cast<double>(1e-5f));
}

TEST_F(GgufRealModel, reads_tokenizer_arrays) {
    EXPECT_EQ(file_->get_string("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(file_->get_string("tokenizer.ggml.pre"), "smollm");
    const auto tokens = file_->get_string_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.has_value());
    ASSERT_EQ(tokens->size(), 49152u);
    EXPECT_EQ((*tokens)[0], "<|endoftext|>");
    EXPECT_EQ((*tokens)[2], "<|im_end|>");
    const auto merges = file_->get_string_array("tokenizer.ggml.merges");
    ASSERT_TRUE(merges.has_value());
    ASSERT_EQ(merges->size(), 48900u);
    EXPECT_EQ((*merges)[0], "Ġ t");
    EXPECT_EQ(file_->get_int_array("tokenizer.ggml.token_type")->size(), 49152u);
    EXPECT_EQ(file_->get_int("tokenizer.ggml.bos_token_id"), 1);
    EXPECT_EQ(file_->get_int("tokenizer.ggml.eos_token_id"), 2);
    EXPECT_NE(file_->get_string("tokenizer.chat_template")->find("<|im_start|>"),
              std::string::npos);
}

TEST_F(GgufRealModel, reads_tensor_infos_and_data) {
    const auto& tensors = file_->tensors();
    ASSERT_EQ(tensors.size(), 272u);
    int n_q4_1 = 0, n_f32 = 0, n_q8_0 = 0;
    int64_t n_parameters = 0;
    for (const auto& info : tensors) {
        n_q4_1 += info.dtype == DType::Q4_1;
        n_f32 += info.dtype == DType::F32;
        n_q8_0 += info.dtype == DType::Q8_0;
        n_parameters += info.n_elements;
    }
    EXPECT_EQ(n_q4_1, 210);
    EXPECT_EQ(n_f32, 61);
    EXPECT_EQ(n_q8_0, 1);
    EXPECT_EQ(n_parameters, 134515008);

    const TensorInfo* embd = file_->find_tensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    EXPECT_EQ(embd->dtype, DType::Q8_0);
    EXPECT_EQ(embd->shape, (std::vector<int64_t>{576, 49152}));
    EXPECT_EQ(embd->size_bytes, 30081024u);
    EXPECT_EQ(embd->offset_bytes, 0u);

    // The last tensor ends exactly at the end of the file.
    const TensorInfo* norm = file_->find_tensor("output_norm.weight");
    ASSERT_NE(norm, nullptr);
    EXPECT_EQ(file_->data_offset_bytes() + norm->offset_bytes + norm->size_bytes, 98362432u);
    float first[2];
    std::memcpy(first, file_->tensor_data(*norm).data(), sizeof(first));
    EXPECT_EQ(first[0], 1.7578125f);
    EXPECT_EQ(first[1], 1.8203125f);

    const TensorInfo* attn_norm = file_->find_tensor("blk.0.attn_norm.weight");
    ASSERT_NE(attn_norm, nullptr);
    EXPECT_EQ(file_->data_offset_bytes() + attn_norm->offset_bytes, 31866688u);
    std::memcpy(first, file_->tensor_data(*attn_norm).data(), sizeof(first));
    EXPECT_EQ(first[0], 0.01397705078125f);
    EXPECT_EQ(first[1], 0.0238037109375f);
}

}  // namespace
}  // namespace ladder::gguf
