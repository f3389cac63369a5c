// Scalar reference for the 256-element K-quants Q2_K .. Q6_K and their
// activation type Q8_K: dequantize, Q8_K quantize, and the integer dot
// products of each K-quant with Q8_K. Counts are in super-blocks.
#pragma once

#include <cstdint>

#include "ladder/tensor/quant_blocks.h"

namespace ladder::tensor {

void dequantize_q2_k(const BlockQ2_K* blocks, float* dst, int64_t n_blocks);
void dequantize_q3_k(const BlockQ3_K* blocks, float* dst, int64_t n_blocks);
void dequantize_q4_k(const BlockQ4_K* blocks, float* dst, int64_t n_blocks);
void dequantize_q5_k(const BlockQ5_K* blocks, float* dst, int64_t n_blocks);
void dequantize_q6_k(const BlockQ6_K* blocks, float* dst, int64_t n_blocks);
void dequantize_q8_k(const BlockQ8_K* blocks, float* dst, int64_t n_blocks);

// ggml's quantize_row_q8_K_ref (src must be finite). An all-zero block gets
// d = 0, zero codes and zero bsums (ggml leaves its bsums unwritten there).
void quantize_q8_k(const float* src, BlockQ8_K* blocks, int64_t n_blocks);

// ggml's quantize_row_q*_K_ref, bit for bit (src must be finite): what
// llama-quantize writes for these types without an importance matrix.
void quantize_q2_k(const float* src, BlockQ2_K* blocks, int64_t n_blocks);
void quantize_q3_k(const float* src, BlockQ3_K* blocks, int64_t n_blocks);
void quantize_q4_k(const float* src, BlockQ4_K* blocks, int64_t n_blocks);
void quantize_q5_k(const float* src, BlockQ5_K* blocks, int64_t n_blocks);
void quantize_q6_k(const float* src, BlockQ6_K* blocks, int64_t n_blocks);

// Per super-block: the weighted sum of integer sub-block dot products is exact
// in int32 (as are the mins, folded in through the activations' bsums); it is
// then scaled once and added to a float accumulator, super-blocks in order.
float vec_dot_q2_k_q8_k(const BlockQ2_K* w, const BlockQ8_K* a, int64_t n_blocks);
float vec_dot_q3_k_q8_k(const BlockQ3_K* w, const BlockQ8_K* a, int64_t n_blocks);
float vec_dot_q4_k_q8_k(const BlockQ4_K* w, const BlockQ8_K* a, int64_t n_blocks);
float vec_dot_q5_k_q8_k(const BlockQ5_K* w, const BlockQ8_K* a, int64_t n_blocks);
float vec_dot_q6_k_q8_k(const BlockQ6_K* w, const BlockQ8_K* a, int64_t n_blocks);

}  // namespace ladder::tensor
