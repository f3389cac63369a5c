// Which type each tensor gets when a model is quantized: llama-quantize's
// rules (llama.cpp's src/llama-quant.cpp) by tensor name, layer, shape and
// the model's hyperparameters, with its fallbacks for rows that do not divide
// into the type's blocks. Pure functions of their inputs, so the rules are
// tested alone; quantize_model.h applies them to a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ladder/tensor/dtype.h"
#include "ladder/tools/quantize_types.h"

namespace ladder::tools {

// The hyperparameters the rules read (llama.cpp's hparams of layer 0).
struct QuantizeModelFacts {
    std::string architecture;  // general.architecture
    int64_t n_layer = 0;       // {arch}.block_count
    int64_t n_head = 0;        // {arch}.attention.head_count
    int64_t n_head_kv = 0;     // {arch}.attention.head_count_kv (default n_head)
    int64_t n_expert = 0;      // {arch}.expert_count
    bool is_70b = false;       // llama.cpp sizes the model as LLM_TYPE_70B

    int64_t n_gqa() const { return n_head_kv == 0 ? 0 : n_head / n_head_kv; }
};

struct TypeRuleOptions {
    FileType file_type = FileType::MostlyQ8_0;
    tensor::DType default_type = tensor::DType::Q8_0;
    std::optional<tensor::DType> output_tensor_type;    // --output-tensor-type
    std::optional<tensor::DType> token_embedding_type;  // --token-embedding-type
    bool pure = false;                                  // --pure: no mixes
    bool quantize_output_tensor = true;                 // false with --leave-output-tensor
};

struct TensorToQuantize {
    std::string name;
    tensor::DType dtype;
    std::vector<int64_t> shape;  // GGUF order: shape[0] is the row length
};

struct TensorTypeChoice {
    tensor::DType type;                           // what the tensor is written as
    bool quantizable = false;                     // a weight the rules may change at all
    std::optional<tensor::DType> fell_back_from;  // the mix's type, when rows did not fit it
};

// One choice per tensor, for tensors given in the order they are written
// (quantize_order_less): the mixes count attention-V and FFN tensors as they
// go. Throws util::InputError for a mixture-of-experts tensor whose name
// carries no valid layer number.
std::vector<TensorTypeChoice> choose_tensor_types(const std::vector<TensorToQuantize>& tensors,
                                                  const QuantizeModelFacts& facts,
                                                  const TypeRuleOptions& options);

// llama-quantize's tensor order: by the layer number of "blk.N." (tensors
// outside the blocks first), then by name.
bool quantize_order_less(const std::string& a, const std::string& b);

}  // namespace ladder::tools
