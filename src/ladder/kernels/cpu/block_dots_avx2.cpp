// The AVX2 table's rows from the block kernels (block_kernels_x86.h), compiled
// for AVX2 + FMA + F16C: every quantized weight type but Q4_K and Q6_K (whose
// kernels gemm_avx2.cpp and vec_dot_avx2.cpp write out by hand), and BF16.
// Every header the block kernels use comes first, so that only the block
// kernels themselves fall under the target pragma.
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/gemv.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/quant_k_codes.h"

// GCC and clang spell "every function from here on" differently.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#include "ladder/kernels/cpu/block_kernels_x86.h"

namespace ladder::kernels::cpu {

namespace {

// Up to this many activation rows (a verification step's drafted tokens, a
// small batch) run the decode kernels' few-rows form, which reads the weights
// once for all of them (SmolLM2 Q4_1, 2 threads: T = 2 cost 1.3x T = 1, was
// 1.6x with the row tiles; T = 8 still 8% less than them).
constexpr int64_t kMaxFewRows = 8;

// u8 x s8 lane sums by maddubs then madd by ones (ggml's x86 path). maddubs
// cannot saturate for these callers: u below 64, or |s| <= 127 with u <= 128.
struct Avx2Lanes {
    static __m256i dot(__m256i u, __m256i s) { return dot_u8_s8(u, s); }
    // Lanes of sum((q - c) * y), the difference taken in the int16 pairs.
    static __m256i dot_centered(__m256i q, __m256i c, __m256i y) {
        const __m256i pairs =
            _mm256_sub_epi16(_mm256_maddubs_epi16(q, y), _mm256_maddubs_epi16(c, y));
        return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    }
};

}  // namespace

namespace detail {

void install_avx2_block_kernels(CpuKernels& k) {
    using tensor::DType;
    install_block_kernels<Avx2Lanes>(k);
    // One activation row of the types with a decode kernel (gemv_avx2.cpp)
    // runs it, and a few rows its few-rows form; more rows the row tiles.
    using Q4_1 = Q4_1Kernel<Avx2Lanes>;
    using Q8_0 = Q8_0Kernel<Avx2Lanes>;
    using Q5_0 = Q5_0Kernel<Avx2Lanes>;
    using Q4_0 = Q4_0Kernel<Avx2Lanes>;
    using Q5_1 = Q5_1Kernel<Avx2Lanes>;
    k.gemm_by_weight[static_cast<int>(DType::Q4_1)] =
        gemv_or<few_rows_or<few_rows_q4_1_q8_1_avx2, block_gemm<Q4_1, kLegacyRows, kActivationRows>,
                            kMaxFewRows>,
                gemv_q4_1_q8_1_avx2>;
    k.gemm_by_weight[static_cast<int>(DType::Q8_0)] =
        gemv_or<few_rows_or<few_rows_q8_0_q8_0_avx2, block_gemm<Q8_0, kLegacyRows, kActivationRows>,
                            kMaxFewRows>,
                gemv_q8_0_q8_0_avx2>;
    k.gemm_by_weight[static_cast<int>(DType::Q5_0)] =
        gemv_or<few_rows_or<few_rows_q5_0_q8_0_avx2, block_gemm<Q5_0, kLegacyRows, kActivationRows>,
                            kMaxFewRows>,
                gemv_q5_0_q8_0_avx2>;
    k.gemm_by_weight[static_cast<int>(DType::Q4_0)] =
        gemv_or<few_rows_or<few_rows_q4_0_q8_0_avx2, block_gemm<Q4_0, kLegacyRows, kActivationRows>,
                            kMaxFewRows>,
                gemv_q4_0_q8_0_avx2>;
    k.gemm_by_weight[static_cast<int>(DType::Q5_1)] =
        gemv_or<few_rows_or<few_rows_q5_1_q8_1_avx2, block_gemm<Q5_1, kLegacyRows, kActivationRows>,
                            kMaxFewRows>,
                gemv_q5_1_q8_1_avx2>;
}

}  // namespace detail

}  // namespace ladder::kernels::cpu

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
