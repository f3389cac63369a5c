// Weight bytes and matmul parameters per token from a tensor table: the tied
// embedding read once as the output matrix, an untied one not at all, norms
// read but not multiplied, and the real default model's figures.
#include "ladder/tools/model_traffic.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

using tensor::DType;

gguf::TensorInfo tensor_info(const std::string& name, DType dtype, std::vector<int64_t> shape,
                             uint64_t size_bytes) {
    int64_t n_elements = 1;
    for (const int64_t d : shape) n_elements *= d;
    return {name, dtype, std::move(shape), 0, size_bytes, n_elements};
}

// Two layers of two Q4_1 matrices and one Q8_0 matrix of 32 parameters each,
// a norm per layer, and a [32 tokens, 4] Q8_0 embedding of 1280 bytes.
std::vector<gguf::TensorInfo> small_model(bool with_output) {
    std::vector<gguf::TensorInfo> tensors = {
        tensor_info("token_embd.weight", DType::Q8_0, {4, 32}, 1280),
        tensor_info("output_norm.weight", DType::F32, {4}, 16),
    };
    for (const std::string layer : {"blk.0.", "blk.1."}) {
        tensors.push_back(tensor_info(layer + "attn_norm.weight", DType::F32, {4}, 16));
        tensors.push_back(tensor_info(layer + "ffn_up.weight", DType::Q4_1, {4, 8}, 100));
        tensors.push_back(tensor_info(layer + "ffn_down.weight", DType::Q4_1, {8, 4}, 100));
        tensors.push_back(tensor_info(layer + "attn_q.weight", DType::Q8_0, {4, 8}, 200));
    }
    if (with_output) tensors.push_back(tensor_info("output.weight", DType::Q6_K, {4, 32}, 500));
    return tensors;
}

TEST(ModelTraffic, tied_embedding_is_read_once_as_the_output_matrix) {
    const auto tensors = small_model(false);
    const ModelTraffic traffic = model_traffic(tensors);
    EXPECT_EQ(traffic.model_bytes, 1280u + 16 + 2 * (16 + 100 + 100 + 200));
    EXPECT_EQ(traffic.decode_bytes_per_token, traffic.model_bytes) << "every tensor, each once";
    EXPECT_EQ(traffic.output_matmul_params, 128);
    EXPECT_EQ(traffic.layer_matmul_params, 2 * 3 * 32) << "norms are not matrices";
    EXPECT_EQ(traffic.n_params, 128 + 4 + 2 * (4 + 3 * 32));
}

TEST(ModelTraffic, untied_embedding_is_left_out_of_the_bytes_per_token) {
    const auto tensors = small_model(true);
    const ModelTraffic traffic = model_traffic(tensors);
    EXPECT_EQ(traffic.model_bytes, 1280u + 500 + 16 + 2 * (16 + 100 + 100 + 200));
    EXPECT_EQ(traffic.decode_bytes_per_token, traffic.model_bytes - 1280)
        << "only one embedding row is read per token";
    EXPECT_EQ(traffic.output_matmul_params, 128) << "output.weight, not token_embd";
}

TEST(ModelTraffic, dominant_type_is_the_one_holding_most_layer_parameters) {
    // 128 Q4_1 parameters against 64 Q8_0; the Q8_0 output matrix (128 more,
    // not a layer matrix) would tip it to Q8_0 if it counted.
    EXPECT_EQ(model_traffic(small_model(false)).dominant_matmul_dtype, DType::Q4_1);
}

TEST(ModelTraffic, prefill_runs_the_output_matrix_once_per_prompt) {
    const ModelTraffic traffic = model_traffic(small_model(false));
    EXPECT_DOUBLE_EQ(traffic.decode_ops_per_token(), 2.0 * (192 + 128));
    EXPECT_DOUBLE_EQ(traffic.prefill_ops_per_token(1), traffic.decode_ops_per_token());
    EXPECT_DOUBLE_EQ(traffic.prefill_ops_per_token(16), 2.0 * (192 + 128.0 / 16));
}

TEST(ModelTraffic, a_table_without_output_or_layer_matrices_is_an_input_error) {
    EXPECT_THROW(model_traffic(std::vector<gguf::TensorInfo>{
                     tensor_info("blk.0.ffn_up.weight", DType::Q4_1, {4, 8}, 100)}),
                 util::InputError);
    EXPECT_THROW(model_traffic(std::vector<gguf::TensorInfo>{
                     tensor_info("token_embd.weight", DType::Q8_0, {4, 16}, 640)}),
                 util::InputError);
}

TEST(ModelTraffic, default_model_reads_its_whole_file_of_tensors_per_token) {
    const auto path =
        std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
    if (!std::filesystem::exists(path))
        GTEST_SKIP() << "default model not present; run `make model`";
    const auto file = gguf::GgufFile::open(path.string());
    const ModelTraffic traffic = model_traffic(file->tensors());
    // SmolLM2-135M ties its Q8_0 embedding: 30 layers of q, o [576, 576], k, v
    // [192, 576], gate, up [1536, 576], down [576, 1536], and [49152, 576] output.
    EXPECT_EQ(traffic.decode_bytes_per_token, traffic.model_bytes);
    EXPECT_EQ(traffic.model_bytes, 96576768u);
    EXPECT_EQ(traffic.layer_matmul_params, 30 * (2 * 576 * 576 + 2 * 192 * 576 + 3 * 1536 * 576));
    EXPECT_EQ(traffic.output_matmul_params, 49152 * 576);
    EXPECT_EQ(traffic.dominant_matmul_dtype, DType::Q4_1);
}

}  // namespace
}  // namespace ladder::tools
