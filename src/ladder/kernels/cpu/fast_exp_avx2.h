// fast_exp (fast_exp.h) on 8 floats at once with AVX2+FMA: the same operations
// in the same order on every lane, so each lane is bit-identical to the scalar
// function for every input, NaN and infinities included. Include only from
// files whose callers check CPUID first (the *_avx2.cpp kernels).
#pragma once

#include <immintrin.h>

#include "ladder/kernels/cpu/simd_x86.h"

#include "ladder/kernels/cpu/fast_exp.h"

namespace ladder::kernels::cpu {

LADDER_AVX2 inline __m256 fast_exp_avx2(__m256 x) {
    using namespace fast_exp_constants;
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(kLog2e), _mm256_set1_ps(kShift));
    const __m256 n = _mm256_sub_ps(z, _mm256_set1_ps(kShift));
    const __m256 minus_n = _mm256_xor_ps(n, sign_bit);
    const __m256 b = _mm256_fmadd_ps(minus_n, _mm256_set1_ps(kLn2Low),
                                     _mm256_fmadd_ps(minus_n, _mm256_set1_ps(kLn2High), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 scale = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_set1_epi32(0x3f800000)));
    const __m256 b2 = _mm256_mul_ps(b, b);
    const __m256 poly = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(kC5), b, _mm256_set1_ps(kC4)), b2,
                        _mm256_fmadd_ps(_mm256_set1_ps(kC3), b, _mm256_set1_ps(kC2))),
        b2, _mm256_mul_ps(_mm256_set1_ps(kC1), b));
    const __m256 normal = _mm256_fmadd_ps(poly, scale, scale);

    // Lanes the scalar code sends elsewhere: |n| > 126, or NaN (unordered).
    const __m256 abs_n = _mm256_andnot_ps(sign_bit, n);
    const __m256 special = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_NLE_UQ);
    if (_mm256_movemask_ps(special) == 0) return normal;

    const __m256 non_positive = _mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ);
    const __m256i bias = _mm256_and_si256(_mm256_castps_si256(non_positive),
                                          _mm256_set1_epi32(static_cast<int>(0x82000000u)));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(bias, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, bias));
    const __m256 saturated = _mm256_mul_ps(s1, s1);
    const __m256 split = _mm256_mul_ps(_mm256_fmadd_ps(s2, poly, s2), s1);
    const __m256 far = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    __m256 result = _mm256_blendv_ps(normal, _mm256_blendv_ps(split, saturated, far), special);
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(result, _mm256_add_ps(x, x), nan);
}

}  // namespace ladder::kernels::cpu
