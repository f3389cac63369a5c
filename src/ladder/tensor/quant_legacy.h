// Scalar reference for the 32-element "legacy" quants Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0 and Q8_1: dequantize, round-to-nearest quantize and integer dot
// products, each the same arithmetic as ggml's reference (ggml-quants.c and
// the *_generic dot products of ggml-cpu). Counts are in blocks.
#pragma once

#include <cstdint>

#include "ladder/tensor/quant_blocks.h"

namespace ladder::tensor {

void dequantize_q4_0(const BlockQ4_0* blocks, float* dst, int64_t n_blocks);
void dequantize_q4_1(const BlockQ4_1* blocks, float* dst, int64_t n_blocks);
void dequantize_q5_0(const BlockQ5_0* blocks, float* dst, int64_t n_blocks);
void dequantize_q5_1(const BlockQ5_1* blocks, float* dst, int64_t n_blocks);
void dequantize_q8_0(const BlockQ8_0* blocks, float* dst, int64_t n_blocks);
void dequantize_q8_1(const BlockQ8_1* blocks, float* dst, int64_t n_blocks);

// src must be finite: ggml's reference converts out-of-range floats to ints,
// which is undefined for NaN and inf.
void quantize_q4_0(const float* src, BlockQ4_0* blocks, int64_t n_blocks);
void quantize_q4_1(const float* src, BlockQ4_1* blocks, int64_t n_blocks);
void quantize_q5_0(const float* src, BlockQ5_0* blocks, int64_t n_blocks);
void quantize_q5_1(const float* src, BlockQ5_1* blocks, int64_t n_blocks);
void quantize_q8_0(const float* src, BlockQ8_0* blocks, int64_t n_blocks);
void quantize_q8_1(const float* src, BlockQ8_1* blocks, int64_t n_blocks);

// One weight row with one activation row of the same length. Each block's
// products are summed exactly in int32, scaled by the two block scales, and
// added to a float accumulator block by block in increasing order.
float vec_dot_q4_0_q8_0(const BlockQ4_0* w, const BlockQ8_0* a, int64_t n_blocks);
float vec_dot_q4_1_q8_1(const BlockQ4_1* w, const BlockQ8_1* a, int64_t n_blocks);
float vec_dot_q5_0_q8_0(const BlockQ5_0* w, const BlockQ8_0* a, int64_t n_blocks);
float vec_dot_q5_1_q8_1(const BlockQ5_1* w, const BlockQ8_1* a, int64_t n_blocks);
float vec_dot_q8_0_q8_0(const BlockQ8_0* w, const BlockQ8_0* a, int64_t n_blocks);

}  // namespace ladder::tensor
