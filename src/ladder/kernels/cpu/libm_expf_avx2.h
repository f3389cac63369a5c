// The C library's expf on 8 floats at once with AVX2+FMA, in its bits: glibc
// (2.27 and later) computes expf in double from a 32-entry table of 2^(i/32)
// and a cubic, and on a CPU with FMA its resolver picks a build that fuses
// the multiply-adds below. llama.cpp's flash-attention softmax calls that expf
// once per score; this gives a quantized cache's softmax llama.cpp's bits
// without one call per score. Every lane equals std::exp(float) for every
// input, NaN and infinities included (tests/kernels/libm_expf_test.cpp checks
// it against the library). Include only from files whose callers check CPUID
// first (the *_avx2.cpp kernels).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ladder/kernels/cpu/simd_x86.h"

namespace ladder::kernels::cpu {

namespace libm_expf_constants {
// 32 / ln 2, the rounding shift 1.5 * 2^52, and the cubic's coefficients
// (scaled for r in units of 1/32 of ln 2), as glibc's exp2f data holds them.
inline constexpr double kInvLn2N = 0x1.71547652b82fep+5;
inline constexpr double kShift = 0x1.8p+52;
inline constexpr double kC0 = 0x1.c6af84b912394p-20;
inline constexpr double kC1 = 0x1.ebfce50fac4f3p-13;
inline constexpr double kC2 = 0x1.62e42ff0c52d6p-6;
// 2^(i/32) with i << 47 taken out of the exponent field, for i = 0..31.
inline constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
// Below kUnderflow the library returns 0; from there to kMayUnderflow the
// smallest subnormal (its "may underflow" value, 0x1.4p-75f squared); above
// 0x1.62e42ep6f it overflows to infinity.
inline constexpr float kUnderflow = -0x1.9fe368p+6f;
inline constexpr float kMayUnderflow = -0x1.9d1d9ep+6f;
inline constexpr float kOverflow = 0x1.62e42ep+6f;
}  // namespace libm_expf_constants

// expf of 4 floats (as doubles) through the table and the cubic.
LADDER_AVX2 inline __m128 libm_expf_core_x4(__m128 x) {
    using namespace libm_expf_constants;
    const __m256d xd = _mm256_cvtps_pd(x);
    const __m256d inv_ln2_n = _mm256_set1_pd(kInvLn2N);
    const __m256d shifted = _mm256_fmadd_pd(inv_ln2_n, xd, _mm256_set1_pd(kShift));
    const __m256i ki = _mm256_castpd_si256(shifted);
    const __m256d kd = _mm256_sub_pd(shifted, _mm256_set1_pd(kShift));
    const __m256d r = _mm256_fmsub_pd(inv_ln2_n, xd, kd);
    const __m256i index = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
    const __m256i t = _mm256_add_epi64(
        _mm256_i64gather_epi64(reinterpret_cast<const long long*>(kTable), index, 8),
        _mm256_slli_epi64(ki, 47));
    const __m256d s = _mm256_castsi256_pd(t);
    const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(kC0), _mm256_set1_pd(kC1));
    const __m256d r2 = _mm256_mul_pd(r, r);
    const __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(kC2), _mm256_set1_pd(1.0));
    return _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_fmadd_pd(z, r2, y), s));
}

// The library's edges over `core` (the table and the cubic's results): NaN
// gives NaN (x + x), then overflow, underflow. Shared by libm_expf_avx512.h.
LADDER_AVX2 inline __m256 libm_expf_edges(__m256 x, __m256 core) {
    using namespace libm_expf_constants;
    __m256 y = _mm256_blendv_ps(core, _mm256_set1_ps(0x1p-149f),
                                _mm256_cmp_ps(x, _mm256_set1_ps(kMayUnderflow), _CMP_LT_OQ));
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(),
                         _mm256_cmp_ps(x, _mm256_set1_ps(kUnderflow), _CMP_LT_OQ));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()),
                         _mm256_cmp_ps(x, _mm256_set1_ps(kOverflow), _CMP_GT_OQ));
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

LADDER_AVX2 inline __m256 libm_expf_avx2(__m256 x) {
    return libm_expf_edges(x, _mm256_set_m128(libm_expf_core_x4(_mm256_extractf128_ps(x, 1)),
                                              libm_expf_core_x4(_mm256_castps256_ps128(x))));
}

}  // namespace ladder::kernels::cpu
