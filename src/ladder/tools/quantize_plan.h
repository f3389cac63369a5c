// What `ladder quantize` will write, decided before any byte is: the output
// metadata (llama-quantize's: the input's keys in order, then the quantization
// version and file type), the tensors in llama-quantize's order and the type
// of each. Every refusal (a malformed or unsupported input, a requantization
// not allowed) happens here, so a failed run writes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ladder/gguf/gguf_file.h"
#include "ladder/tools/quantize_rules.h"
#include "ladder/tools/quantize_types.h"

namespace ladder::tools {

struct QuantizeOptions {
    QuantizeType type{};
    std::optional<tensor::DType> output_tensor_type;
    std::optional<tensor::DType> token_embedding_type;
    bool allow_requantize = false;
    bool pure = false;
    bool leave_output_tensor = false;
};

struct PlannedTensor {
    const gguf::TensorInfo* input;  // in the input file
    tensor::DType type;             // written as
    std::vector<int64_t> shape;     // as written: trailing dimensions of 1 dropped, as ggml does
    std::optional<tensor::DType> fell_back_from;

    bool converted() const { return type != input->dtype; }
};

struct QuantizePlan {
    std::vector<std::pair<std::string, gguf::Value>> metadata;  // in output order
    std::vector<PlannedTensor> tensors;                         // in output order
    QuantizeModelFacts facts;
    // Quantized input types that are converted (dequantized, then quantized
    // again): the run warns about each.
    std::vector<tensor::DType> requantized_from;
};

// Throws util::InputError with a one-line message when the input cannot be
// quantized as asked.
QuantizePlan plan_quantization(const gguf::GgufFile& input, const QuantizeOptions& options);

}  // namespace ladder::tools
