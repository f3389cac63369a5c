// Typed, shape-checked views of a model's tensors inside the mapped GGUF file.
#pragma once

#include <cstdint>
#include <string>

#include "ladder/kernels/cpu/matmul.h"

namespace ladder::gguf {
class GgufFile;
}

namespace ladder::model {

using kernels::cpu::WeightMatrix;

// Looks tensors up by name and checks their shapes against the config, so the
// forward pass can trust every size. Errors name the tensor and both shapes.
class WeightLoader {
public:
    explicit WeightLoader(const gguf::GgufFile& file) : file_(file) {}

    bool has(const std::string& name) const;
    // A [n_out, n_in] matrix (GGUF shape {n_in, n_out}) of any supported type.
    WeightMatrix matrix(const std::string& name, int64_t n_out, int64_t n_in) const;
    // An F32 vector of n elements (norm weights, biases).
    const float* vector(const std::string& name, int64_t n) const;

private:
    const gguf::GgufFile& file_;
};

}  // namespace ladder::model
