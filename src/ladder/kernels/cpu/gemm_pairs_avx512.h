// Internal to kernels/cpu: the AVX-512 multi-row kernels for many activation
// rows (gemm_pairs_avx512.cpp). They take the GemmFn arguments; gemm_avx512.cpp
// chooses between them and its smaller tiles by the number of activation rows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ladder::kernels::cpu::detail {

// Whether the pair kernels take a product of this width: they re-lay the
// activations into a fixed stack buffer, which holds up to this many blocks.
constexpr int64_t kMaxPairPanelBlocks = 96;

void gemm_pairs_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

void gemm_pairs_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

void gemm_pairs_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

}  // namespace ladder::kernels::cpu::detail
