// Internal to kernels/cpu: AVX-512 kernels for a single activation row (decode),
// which reads each weight once and so must keep pace with memory
// (gemv_avx512.cpp). gemm_avx512.cpp routes T = 1 here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ladder::kernels::cpu::detail {

// Weight rows the kernels take together; a matrix needs at least this many.
constexpr int kGemvRows = 8;

// out[r] = one weight row r . activation, r < n_weight_rows.
using GemvFn = void (*)(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activation, int64_t n, float* out);

// out[r] = vec_dot_q4_1_q8_1(weight row r, activation) bit for bit, r < n_weight_rows.
void gemv_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);

// out[r] = vec_dot_q8_0_q8_0(weight row r, activation) bit for bit, r < n_weight_rows.
void gemv_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);

// out[r] = the AVX2 vec_dot_q5_0_q8_0(weight row r, activation) bit for bit.
void gemv_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);

}  // namespace ladder::kernels::cpu::detail
