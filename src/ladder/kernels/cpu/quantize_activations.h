// Activation rows [T, n_in] quantized to a weight dtype's vec_dot_type, in a
// buffer the caller owns (the per-step arena): kernels never allocate.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/dtype.h"

namespace ladder::kernels::cpu {

// A view of quantized activations: n_rows rows of n_in elements, each row
// row_bytes long and rows back to back.
struct QuantizedActivations {
    tensor::DType dtype = tensor::DType::F32;
    const void* data = nullptr;
    int64_t n_rows = 0;
    int64_t n_in = 0;
    size_t row_bytes = 0;

    const void* row(int64_t t) const {
        return static_cast<const char*>(data) + static_cast<size_t>(t) * row_bytes;
    }
};

// Bytes a buffer needs for n_rows x n_in activations of dtype; n_in must be a
// whole number of blocks (checked: the model validates shapes at load).
size_t quantized_activations_bytes(tensor::DType dtype, int64_t n_rows, int64_t n_in);

// Quantizes x [n_rows, n_in] (rows contiguous) to dtype into buffer, which must
// hold quantized_activations_bytes(); returns the view of it. Single-threaded:
// it costs one pass over T x n_in floats, small beside the matmul it feeds.
QuantizedActivations quantize_activations(const CpuKernels& kernels, tensor::DType dtype,
                                          const float* x, int64_t n_rows, int64_t n_in,
                                          void* buffer, size_t buffer_bytes);

// The same with cpu_kernels().
QuantizedActivations quantize_activations(tensor::DType dtype, const float* x, int64_t n_rows,
                                          int64_t n_in, void* buffer, size_t buffer_bytes);

}  // namespace ladder::kernels::cpu
