// The scalar reference for whole rows of any supported dtype: dequantize,
// quantize and the weight-row x activation-row dot product. Fast kernels are
// tested against these, and the CPU backend falls back to them without SIMD.
// The dtype is dispatched here, once per row, never per element.
#pragma once

#include <cstdint>

#include "ladder/tensor/dtype.h"

namespace ladder::tensor {

// What the reference implements, so loaders can reject other types at the
// edge with a clear message instead of hitting the checks below.
// dequantize: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K..Q6_K, Q8_K.
bool can_dequantize(DType dtype);
// quantize: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K..Q6_K, Q8_K.
bool can_quantize(DType dtype);
// vec_dot weight types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K.
bool can_vec_dot(DType weight_type);

// The calls below require (checked, aborting on violation: a bug, not input):
// the dtype is supported, n is a whole number of blocks of that dtype, and the
// buffers are aligned as the dtype's block struct (2 bytes, 4 for F32 and Q8_K;
// GGUF tensor data always is).

// dst[0, n) = the n values that src (row_bytes(dtype, n) bytes) encodes,
// bit for bit as ggml's dequantize_row_* computes them.
void dequantize_row(DType dtype, const void* src, float* dst, int64_t n);

// Encodes n floats into dst (row_bytes(dtype, n) bytes) by ggml's reference
// round-to-nearest quantization (quantize_row_*_ref), bit for bit. src must be
// finite for quantized types.
void quantize_row(DType dtype, const float* src, void* dst, int64_t n);

// Dot product of one weight row (weight_type) with one activation row of n
// elements already quantized to vec_dot_type(weight_type).
//
// Summation order (the batch-invariance rule of DESIGN.md relies on it): each
// block's (super-block's) products are summed exactly in integers, scaled by
// the block scales, and added to one float accumulator in increasing block
// order. Plain float types add float products to a double in index order. The
// result depends only on the two rows, never on what else is being computed.
float vec_dot(DType weight_type, const void* weights, const void* activations, int64_t n);

}  // namespace ladder::tensor
