// AVX2 + FMA + F16C dot products (integer maddubs/madd per block, as ggml's x86
// path does) of Q4_K, Q6_K, F16 and F32; the other types' come from their
// block kernels (block_kernels_x86.h, block_dots_avx2.cpp). Every function carries its target attribute so the rest of the
// binary stays baseline x86-64; nothing here runs unless CPUID said AVX2.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::BlockQ4_K;
using tensor::BlockQ6_K;
using tensor::BlockQ8_K;
using tensor::kQKK;


// Q4_K x Q8_K per super-block: d_a * d_w * sum_j scale_j * sum(q * y) over the
// 8 sub-blocks, minus d_a * dmin_w * sum_j min_j * (sum of y in sub-block j),
// the second from the activations' bsums. The min terms accumulate as ggml's
// x86 kernel does, so results match it bit for bit: four float lanes, lane k
// taking sub-blocks 2k and 2k + 1 by one fma with -(d_a * dmin_w) per
// super-block, summed as (0 + 2) + (1 + 3) and added to hsum(acc) at the end.
LADDER_AVX2 float vec_dot_q4_k_q8_k(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const BlockQ4_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activations);
    const int64_t n_blocks = n / kQKK;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc = _mm256_setzero_ps();
    __m128 acc_mins = _mm_setzero_ps();
    for (int64_t i = 0; i < n_blocks; ++i) {
        uint8_t scales[8];
        uint8_t mins[8];
        unpack_q4_k_scales(w[i].scales, scales, mins);
        const int16_t* bsums = a[i].bsums;
        int32_t min_lanes[4];
        for (int k = 0; k < 4; ++k) {
            min_lanes[k] = mins[2 * k] * (bsums[4 * k] + bsums[4 * k + 1]) +
                           mins[2 * k + 1] * (bsums[4 * k + 2] + bsums[4 * k + 3]);
        }
        __m256i sums = _mm256_setzero_si256();
        for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles) and 2c + 1
            const __m256i packed =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i].qs + 32 * c));
            const __m256i q_lo = _mm256_and_si256(packed, low4);
            const __m256i q_hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
            const auto* y = reinterpret_cast<const __m256i*>(a[i].qs + 64 * c);
            const __m256i p_lo = _mm256_maddubs_epi16(q_lo, _mm256_loadu_si256(y));
            const __m256i p_hi = _mm256_maddubs_epi16(q_hi, _mm256_loadu_si256(y + 1));
            sums =
                _mm256_add_epi32(sums, _mm256_madd_epi16(p_lo, _mm256_set1_epi16(scales[2 * c])));
            sums = _mm256_add_epi32(sums,
                                    _mm256_madd_epi16(p_hi, _mm256_set1_epi16(scales[2 * c + 1])));
        }
        const float d = a[i].d * half_to_float(w[i].d);
        const float neg_dmin = -(a[i].d * half_to_float(w[i].dmin));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sums), acc);
        acc_mins = _mm_fmadd_ps(_mm_set1_ps(neg_dmin),
                                _mm_cvtepi32_ps(_mm_loadu_si128(
                                    reinterpret_cast<const __m128i*>(min_lanes))),
                                acc_mins);
    }
    acc_mins = _mm_add_ps(acc_mins, _mm_movehl_ps(acc_mins, acc_mins));
    acc_mins = _mm_add_ss(acc_mins, _mm_movehdup_ps(acc_mins));
    return hsum(acc) + _mm_cvtss_f32(acc_mins);
}

// Q6_K x Q8_K per super-block: d_a * d_w * sum_g scale_g * (sum(q * y) - 32 *
// bsum_g) over the 16 groups of 16, with q in [0, 63] so maddubs stays exact.
// The 32 * scale * bsum terms come off lane k for groups 2k and 2k + 1, as in
// ggml's x86 kernel: which int32 lane holds which part fixes the float rounding.
LADDER_AVX2 float vec_dot_q6_k_q8_k(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const BlockQ6_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activations);
    const int64_t n_blocks = n / kQKK;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n_blocks; ++i) {
        const int8_t* sc = w[i].scales;
        const __m256i scales16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].bsums));
        const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(bsums, scales16), 5);
        __m256i sums = _mm256_setzero_si256();
        for (int half = 0; half < 2; ++half) {  // 128 elements each
            const auto* ql = reinterpret_cast<const __m256i*>(w[i].ql + 64 * half);
            const __m256i ql0 = _mm256_loadu_si256(ql);
            const __m256i ql1 = _mm256_loadu_si256(ql + 1);
            const __m256i qh =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i].qh + 32 * half));
            // Elements 0..31, 32..63, 64..95, 96..127 of this half.
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, low4),
                                _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45)),
                _mm256_or_si256(_mm256_and_si256(ql1, low4),
                                _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                                _mm256_and_si256(qh, bits45)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45)),
            };
            const auto* y = reinterpret_cast<const __m256i*>(a[i].qs + 128 * half);
            for (int k = 0; k < 4; ++k) {
                const int g = 8 * half + 2 * k;  // groups g (first 16 bytes) and g + 1
                const __m256i group_scales =
                    _mm256_set_m128i(_mm_set1_epi16(sc[g + 1]), _mm_set1_epi16(sc[g]));
                const __m256i pairs = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256(y + k));
                sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, group_scales));
            }
        }
        sums = _mm256_sub_epi32(sums, bias);
        const float d = a[i].d * half_to_float(w[i].d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sums), acc);
    }
    return hsum(acc);
}

// F16 x F16 and F32 x F32: 8 lanes of fused multiply-adds over element
// i = 8k + lane, a fixed tree over the lanes, then the tail in order (the
// scalar path adds in this order too). A product of two halves is exact in
// float, so F16's tail rounds once however it is compiled.
LADDER_AVX2 float vec_dot_f16_f16(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const uint16_t*>(weights);
    const auto* a = static_cast<const uint16_t*>(activations);
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
        const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
        acc = _mm256_fmadd_ps(x, y, acc);
    }
    float sum = hsum(acc);
    for (; i < n; ++i) sum += half_to_float(w[i]) * half_to_float(a[i]);
    return sum;
}

LADDER_AVX2 float vec_dot_f32_f32(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const float*>(weights);
    const auto* a = static_cast<const float*>(activations);
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(a + i), acc);
    }
    float sum = hsum(acc);
    // An explicit fma: whether `sum += w * a` contracts is the compiler's
    // choice, and the scalar path must know which rounding it gets.
    for (; i < n; ++i) sum = std::fma(w[i], a[i], sum);
    return sum;
}

}  // namespace

namespace detail {

void install_avx2_kernels(CpuKernels& k) {
    using tensor::DType;
    const auto set = [&k](DType weight_type, VecDotFn fn) {
        k.vec_dot_by_weight[static_cast<int>(weight_type)] = fn;
    };
    set(DType::Q4_K, vec_dot_q4_k_q8_k);
    set(DType::Q6_K, vec_dot_q6_k_q8_k);
    set(DType::F16, vec_dot_f16_f16);
    set(DType::F32, vec_dot_f32_f32);
    install_avx2_quantizers(k);
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
