// Internal to kernels/cpu: the AVX-512 multi-row kernels for many activation
// rows (gemm_pairs_avx512.cpp, gemm_pairs_k_avx512.cpp). They take the GemmFn
// arguments; gemm_avx512.cpp chooses between them and smaller tiles by the
// number of activation rows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ladder::kernels::cpu::detail {

// The widest rows (elements) the pair kernels take: they re-lay the activations
// into a stack buffer of about 64 KiB, which holds 16 rows of this width.
constexpr int64_t kMaxPairWidth = 3072;

void gemm_pairs_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

void gemm_pairs_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

void gemm_pairs_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

void gemm_pairs_q4_k_q8_k(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

void gemm_pairs_q6_k_q8_k(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

}  // namespace ladder::kernels::cpu::detail
