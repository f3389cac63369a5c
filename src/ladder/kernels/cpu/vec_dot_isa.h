// Internal to kernels/cpu: each per-ISA file overwrites the entries it speeds
// up in a table that starts as a copy of the path below it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ladder/kernels/cpu/vec_dot.h"

namespace ladder::kernels::cpu::detail {

void install_scalar_kernels(CpuKernels& kernels);  // tensor's reference code
void install_avx2_kernels(CpuKernels& kernels);    // AVX2 + FMA + F16C
void install_avx512_kernels(CpuKernels& kernels);  // AVX-512 F/BW/VL + VNNI (block kernels)
void install_avx2_quantizers(CpuKernels& kernels);
// Multi-row kernels (gemm_avx2.cpp, gemm_avx512.cpp), each matching the vec_dot
// its table holds for that dtype; installed right after that table's vec_dots.
void install_avx2_gemm(CpuKernels& kernels);
void install_avx512_gemm(CpuKernels& kernels);
// The types whose vec_dot and multi-row kernel come from one per-block step
// (block_kernels_x86.h): the AVX2 table's, installed after install_avx2_gemm.
void install_avx2_block_kernels(CpuKernels& kernels);

// The AVX-512 block kernels' row tiles of the types gemm_avx512.cpp composes
// with its decode and pair kernels (block_dots_avx512.cpp); GemmFns.
void row_tiles_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void row_tiles_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void row_tiles_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void row_tiles_q4_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void row_tiles_q5_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

}  // namespace ladder::kernels::cpu::detail
