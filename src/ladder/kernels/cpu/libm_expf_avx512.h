// libm_expf_avx2.h's expf with AVX-512: the eight lanes in one vector of
// doubles, and the table looked up by two permutes of its four vectors
// instead of two gathers, which AMD cores run as microcode (the quantized
// cache's softmax spent most of its time there). The same operations on the
// same doubles, so the same bits (tests/kernels/libm_expf_test.cpp). Include
// only from files whose callers check CPUID first.
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma once

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "ladder/kernels/cpu/libm_expf_avx2.h"

namespace ladder::kernels::cpu {

LADDER_AVX512 inline __m256 libm_expf_avx512(__m256 x) {
    using namespace libm_expf_constants;
    const auto* table = reinterpret_cast<const double*>(kTable);
    const __m512d xd = _mm512_cvtps_pd(x);
    const __m512d inv_ln2_n = _mm512_set1_pd(kInvLn2N);
    const __m512d shifted = _mm512_fmadd_pd(inv_ln2_n, xd, _mm512_set1_pd(kShift));
    const __m512i ki = _mm512_castpd_si512(shifted);
    const __m512d kd = _mm512_sub_pd(shifted, _mm512_set1_pd(kShift));
    const __m512d r = _mm512_fmsub_pd(inv_ln2_n, xd, kd);
    // Entries 0..15 and 16..31 by the index's low four bits, then bit 4 picks.
    const __m512d low = _mm512_permutex2var_pd(_mm512_loadu_pd(table), ki,
                                               _mm512_loadu_pd(table + 8));
    const __m512d high = _mm512_permutex2var_pd(_mm512_loadu_pd(table + 16), ki,
                                                _mm512_loadu_pd(table + 24));
    const __mmask8 upper = _mm512_test_epi64_mask(ki, _mm512_set1_epi64(16));
    const __m512i t = _mm512_add_epi64(_mm512_castpd_si512(_mm512_mask_blend_pd(upper, low, high)),
                                       _mm512_slli_epi64(ki, 47));
    const __m512d s = _mm512_castsi512_pd(t);
    const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
    const __m512d r2 = _mm512_mul_pd(r, r);
    const __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
    return libm_expf_edges(x, _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_fmadd_pd(z, r2, y), s)));
}

}  // namespace ladder::kernels::cpu
