// Internal to kernels/cpu: the online softmax of attend_heads_any_type
// (attention_isa.h, online_softmax_scalar) eight scores at a time, over a
// path's expf (libm_expf_avx2.h, libm_expf_avx512.h): the same weights,
// rescales and sum, bit for bit. Include only from files whose callers check
// CPUID first.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu::detail {

// Lane j of the result is lane j - kShift of v (-inf where j < kShift).
template <int kShift>
LADDER_AVX2 inline __m256 lanes_later(__m256 v) {
    const __m256i from = _mm256_setr_epi32(0 - kShift, 1 - kShift, 2 - kShift, 3 - kShift,
                                           4 - kShift, 5 - kShift, 6 - kShift, 7 - kShift);
    const __m256 moved = _mm256_permutevar8x32_ps(v, from);
    constexpr int kFilled = (1 << kShift) - 1;
    return _mm256_blend_ps(moved, _mm256_set1_ps(-std::numeric_limits<float>::infinity()),
                           kFilled);
}

// maxima[i] = the largest of scores[0, i), -inf for i = 0, as the reference
// keeps its running maximum (a score replaces it only when greater): a NaN
// score is never the largest, and of equal ones (+0, -0) the earlier stays.
// Eight at a time, each vector's maxima by three shifted maxima: the running
// maximum was a serial chain through every score.
LADDER_AVX2 inline void running_maxima(const float* scores, float* maxima, int32_t n) {
    const __m256 minus_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    // max_ps(later, earlier) keeps `earlier` unless `later` is greater, as
    // the reference does; a NaN turned to -inf never is.
    __m256 before = minus_inf;  // every lane: the maximum before this vector
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 s = _mm256_loadu_ps(scores + i);
        s = _mm256_blendv_ps(s, minus_inf, _mm256_cmp_ps(s, s, _CMP_UNORD_Q));
        __m256 upto = _mm256_max_ps(s, lanes_later<1>(s));  // lane j: max of lanes [0, j]
        upto = _mm256_max_ps(upto, lanes_later<2>(upto));
        upto = _mm256_max_ps(upto, lanes_later<4>(upto));
        _mm256_storeu_ps(maxima + i, _mm256_max_ps(lanes_later<1>(upto), before));
        before = _mm256_max_ps(_mm256_permutevar8x32_ps(upto, _mm256_set1_epi32(7)), before);
    }
    float running = _mm256_cvtss_f32(before);
    for (; i < n; ++i) {
        maxima[i] = running;
        if (scores[i] > running) running = scores[i];
    }
}

// sums[h] = each head's chain sum = fma(sum, rescale, weight) in position
// order (rows n apart), kHeads chains side by side: a chain is serial (its
// roundings are llama.cpp's), and one alone waited out every fma's latency
// (three quarters of this softmax's time).
template <int kHeads>
LADDER_AVX2 void chain_sums(const float* weights, const float* rescales, int32_t n,
                            float* sums) {
    float sum[kHeads] = {};
    for (int32_t k = 0; k < n; ++k) {
        for (int h = 0; h < kHeads; ++h) {
            sum[h] = std::fma(sum[h], rescales[h * int64_t{n} + k], weights[h * int64_t{n} + k]);
        }
    }
    for (int h = 0; h < kHeads; ++h) sums[h] = sum[h];
}

// The online softmax of n_heads heads (attention_isa.h, online_softmax_scalar;
// at most 8). Exp: a struct with a static __m256 exp(__m256), the path's expf.
template <typename Exp>
LADDER_AVX2 void online_softmax_x8(float* scores, float* rescales, int32_t n, int32_t n_heads,
                                   float* sums) {
    using ChainSumsFn = void (*)(const float*, const float*, int32_t, float*);
    static constexpr ChainSumsFn kChainSums[] = {chain_sums<1>, chain_sums<2>, chain_sums<3>,
                                                 chain_sums<4>, chain_sums<5>, chain_sums<6>,
                                                 chain_sums<7>, chain_sums<8>};
    LADDER_CHECK(n_heads >= 1 && n_heads <= 8, "online softmax of 1 to 8 heads");
    const __m256 one = _mm256_set1_ps(1.0f);
    const auto weigh = [&](float* score_at, float* rescale_at) LADDER_AVX2 {
        const __m256 s = _mm256_loadu_ps(score_at);
        const __m256 m = _mm256_loadu_ps(rescale_at);
        const __m256 new_max = _mm256_cmp_ps(s, m, _CMP_GT_OQ);
        const __m256 e =
            Exp::exp(_mm256_blendv_ps(_mm256_sub_ps(s, m), _mm256_sub_ps(m, s), new_max));
        _mm256_storeu_ps(score_at, _mm256_blendv_ps(e, one, new_max));
        _mm256_storeu_ps(rescale_at, _mm256_blendv_ps(one, e, new_max));
    };
    // Per head, the maximum before each position (in rescales for now), then
    // the exponentials eight at a time; then the heads' sums together.
    for (int32_t h = 0; h < n_heads; ++h) {
        float* head_scores = scores + h * int64_t{n};
        float* head_rescales = rescales + h * int64_t{n};
        running_maxima(head_scores, head_rescales, n);
        int32_t i = 0;
        for (; i + 8 <= n; i += 8) weigh(head_scores + i, head_rescales + i);
        if (i < n) {
            float tail_scores[8] = {};
            float tail_maxima[8] = {};
            std::copy(head_scores + i, head_scores + n, tail_scores);
            std::copy(head_rescales + i, head_rescales + n, tail_maxima);
            weigh(tail_scores, tail_maxima);
            std::copy(tail_scores, tail_scores + (n - i), head_scores + i);
            std::copy(tail_maxima, tail_maxima + (n - i), head_rescales + i);
        }
    }
    kChainSums[n_heads - 1](scores, rescales, n, sums);
}

}  // namespace ladder::kernels::cpu::detail
