// The AVX-512 table's rows from the block kernels (block_kernels_x86.h),
// compiled for AVX-512 F/BW/VL + VNNI: the legacy types' u8 x s8 lane sums by
// vpdpbusd (256-bit, through AVX512VL), which does in one instruction what
// AVX2 needs maddubs + madd for; the K-quants and BF16 gain the 32 vector
// registers. Measured (docs/performance.md): ~5% over AVX2 for Q4_1, even for
// Q8_0; two blocks per 512-bit register measured 30% slower, so it is not used.
// Q4_K and Q6_K keep the AVX2 vec_dots. Every header the block kernels use
// comes first, so that only they fall under the target pragma.
// GCC 12's AVX-512 headers initialize "undefined" vectors from themselves and
// warn about it wherever they inline (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/quant_k_codes.h"

// GCC and clang spell "every function from here on" differently.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
#endif
#include "ladder/kernels/cpu/block_kernels_x86.h"

namespace ladder::kernels::cpu {

namespace {

struct VnniLanes {
    static __m256i dot(__m256i u, __m256i s) {
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
    }
    // Lanes of sum((q - c) * y) = sum(q * y) - sum(c * y), exact in int32.
    static __m256i dot_centered(__m256i q, __m256i c, __m256i y) {
        return _mm256_sub_epi32(dot(q, y), dot(c, y));
    }
};

}  // namespace

namespace detail {

void install_avx512_kernels(CpuKernels& k) { install_block_kernels<VnniLanes>(k); }

void row_tiles_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    block_gemm<Q4_1Kernel<VnniLanes>, kLegacyRows, kActivationRows>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

void row_tiles_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    block_gemm<Q8_0Kernel<VnniLanes>, kLegacyRows, kActivationRows>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

void row_tiles_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    block_gemm<Q5_0Kernel<VnniLanes>, kLegacyRows, kActivationRows>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

void row_tiles_q4_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    block_gemm<Q4_0Kernel<VnniLanes>, kLegacyRows, kActivationRows>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

void row_tiles_q5_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    block_gemm<Q5_1Kernel<VnniLanes>, kLegacyRows, kActivationRows>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

}  // namespace detail

}  // namespace ladder::kernels::cpu

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
