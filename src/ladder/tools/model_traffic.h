// What one token of a model costs the machine, read from the file's tensor
// table: the weight bytes a decode step streams and the multiply-adds of its
// matrix products. Pure arithmetic on tensor names and sizes; knows the GGUF
// naming convention (blk.N.*, token_embd, output), not architectures.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "ladder/gguf/gguf_file.h"
#include "ladder/tensor/dtype.h"

namespace ladder::tools {

struct ModelTraffic {
    uint64_t model_bytes = 0;  // every tensor in the file (llama-bench's model_size)
    int64_t n_params = 0;      // every tensor's elements (llama-bench's model_n_params)
    // Weights a decode step reads for one token: every tensor once. The token
    // embedding is read one row per token, which is negligible, unless it is
    // tied: then it is the output matrix and read whole, once.
    uint64_t decode_bytes_per_token = 0;
    int64_t layer_matmul_params = 0;   // matrices inside the blocks (blk.*): every token runs them
    int64_t output_matmul_params = 0;  // the output matrix (token_embd when tied)
    std::map<tensor::DType, int64_t> layer_matmul_params_by_dtype;  // sums to layer_matmul_params
    std::string output_matrix_name;  // "output.weight", or "token_embd.weight" when tied
    tensor::DType output_dtype = tensor::DType::F32;
    // The type that holds most layer matrix parameters, as llama-bench's
    // model_type names a model ("llama 135M Q4_1").
    tensor::DType dominant_matmul_dtype = tensor::DType::F32;

    // Ops (a multiply-add is 2) of a decoded token's matrix products.
    double decode_ops_per_token() const {
        return 2.0 * static_cast<double>(layer_matmul_params + output_matmul_params);
    }
    // Prefill asks logits for the last prompt token only, so the output matrix
    // runs once per prompt, not once per token (for Gemma 3 270M it is most of
    // the parameters, so counting it per token would misstate the ceiling).
    double prefill_ops_per_token(int64_t n_prompt) const;
};

// Throws util::InputError when the table has no layer matrices or no output
// matrix (neither output.weight nor token_embd.weight).
ModelTraffic model_traffic(std::span<const gguf::TensorInfo> tensors);

}  // namespace ladder::tools
