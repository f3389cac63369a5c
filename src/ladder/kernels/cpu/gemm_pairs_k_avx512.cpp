// AVX-512 pair kernels for the K-quants, Q4_K and Q6_K x Q8_K: two outputs
// per 512-bit vector, as gemm_pairs_avx512.cpp does for the legacy types.
// Per output they repeat the AVX2 vec_dots the avx512 table keeps: the same
// int32 lane sums per super-block (exact, so formed with maddubs + vpdpwssd,
// one instruction fewer than maddubs + madd + add), the same scale products,
// fmas and final sums, so every output is bit-identical to its vec_dot.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/gemm_pairs_avx512.h"
#include "ladder/kernels/cpu/pair_panel_avx512.h"
#include "ladder/kernels/cpu/pair_tiles_avx512.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ4_K;
using tensor::BlockQ6_K;
using tensor::BlockQ8_K;
using tensor::kQKK;

constexpr int kSubBlocks = kQKK / 32;  // 32-element sub-blocks per super-block
constexpr int kMaxSuperBlocks = kMaxPairWidth / kQKK;

// One super-block of up to 16 Q8_K activation rows, laid out once per panel:
// the codes as in the legacy panels (pair p of sub-block s: rows 2p and
// 2p + 1 interleaved by dword), the float scales, and the bsums in the two
// shapes the tiles below read.
struct alignas(64) PanelBlockQ8_K {
    static constexpr int64_t kElements = kQKK;
    int8_t qs[kSubBlocks][kPanelPairs][64];
    float d[kPanelRows];
    // Q4_K: -d of row t in lanes 4t..4t + 3, the lanes of its min terms.
    float neg_d[kPanelRows * 4];
    // Q4_K: row t's sum over sub-block s (bsums[2s] + bsums[2s + 1]).
    int16_t sub_sums[kPanelRows][kSubBlocks];
    // Q6_K: pair p's bsums, dword k (bsums 2k, 2k + 1) of each row interleaved.
    int16_t bsums[kPanelPairs][32];
};

LADDER_AVX512 inline __m512i load_256(const void* p) {
    return _mm512_zextsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
}

LADDER_AVX512 inline void build_panel(const BlockQ8_K* const* a, int n_t, int64_t n_blocks,
                                      PanelBlockQ8_K* panel) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t i = 0; i < n_blocks; ++i) {
        PanelBlockQ8_K& b = panel[i];
        for (int p = 0; 2 * p < n_t; ++p) {
            const BlockQ8_K& first = a[2 * p][i];
            const BlockQ8_K* second = 2 * p + 1 < n_t ? &a[2 * p + 1][i] : nullptr;
            for (int s = 0; s < kSubBlocks; ++s) {
                const __m512i y = second ? load_256(second->qs + 32 * s) : _mm512_setzero_si512();
                _mm512_store_si512(b.qs[s][p], interleave_dwords(load_256(first.qs + 32 * s), y));
            }
            const __m512i bsums = second ? load_256(second->bsums) : _mm512_setzero_si512();
            _mm512_store_si512(b.bsums[p], interleave_dwords(load_256(first.bsums), bsums));
        }
        for (int t = 0; t < kPanelRows; ++t) {
            const float d = t < n_t ? a[t][i].d : 0.0f;
            b.d[t] = d;
            for (int k = 0; k < 4; ++k) b.neg_d[4 * t + k] = -d;
            const __m256i pair_sums =
                t < n_t
                    ? _mm256_madd_epi16(
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t][i].bsums)), ones)
                    : _mm256_setzero_si256();
            _mm_storeu_si128(reinterpret_cast<__m128i*>(b.sub_sums[t]),
                             _mm256_cvtepi32_epi16(pair_sums));
        }
    }
}

// Sub-block s's codes and scale applied to pair p's activations, added to
// the pair's int32 lane sums: (c0 * y0 + c1 * y1) * scale + (c2 * y2 + c3 *
// y3) * scale per dword, the integers madd(maddubs(c, y), scale) gives.
LADDER_AVX512 inline __m512i add_scaled_dot(__m512i sums, __m512i codes, const int8_t* pair,
                                            __m512i scale16) {
    const __m512i products =
        _mm512_maddubs_epi16(codes, _mm512_load_si512(reinterpret_cast<const __m512i*>(pair)));
    return _mm512_dpwssd_epi32(sums, products, scale16);
}

// 32 bytes of codes with each dword doubled (lanes 2k and 2k + 1 hold dword k).
LADDER_AVX512 inline __m512i doubled_32(const void* codes) {
    const __m512i double_dwords = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    return _mm512_permutexvar_epi32(double_dwords, load_256(codes));
}

// Per output, as vec_dot_q4_k_q8_k: per super-block acc += (d_a * d_w) * the
// int32 lane sums of scale_s * q * y, and four min lanes (lane k: sub-blocks
// 2k and 2k + 1) += -(d_a * dmin_w) * (min_2k * sub_sum_2k + min_2k+1 *
// sub_sum_2k+1) by one fma; result hsum(acc) + ((m0 + m2) + (m1 + m3)).
template <int kPairs>
struct Q4_KPairTile {
    LADDER_AVX512 static void run(const BlockQ4_K* const* w, const PanelBlockQ8_K* panel,
                                  int64_t n_blocks, float (*res)[kPanelRows]) {
        const BlockQ4_K* row = w[0];
        constexpr int kMinVectors = (2 * kPairs + 3) / 4;  // 4 rows' min lanes per vector
        // Pass 1: the scale products and the min terms of every super-block.
        alignas(64) float scales[kMaxSuperBlocks][kPanelRows];
        uint8_t sub_scales[kMaxSuperBlocks][kSubBlocks];
        __m512 mins[kMinVectors];  // lane 4 (t % 4) + k: row t's min lane k
#pragma GCC unroll 4
        for (int r = 0; r < kMinVectors; ++r) mins[r] = _mm512_setzero_ps();
        for (int64_t i = 0; i < n_blocks; ++i) {
            uint8_t min_codes[kSubBlocks];
            unpack_q4_k_scales(row[i].scales, sub_scales[i], min_codes);
            const float d_w = half_to_float(row[i].d);
            const float dmin_w = half_to_float(row[i].dmin);
            _mm512_store_ps(scales[i],
                            _mm512_mul_ps(_mm512_set1_ps(d_w), _mm512_load_ps(panel[i].d)));
            uint64_t min_bits = 0;
            std::memcpy(&min_bits, min_codes, sizeof min_bits);
            const __m512i min16 = _mm512_broadcast_i32x4(
                _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(min_bits))));
#pragma GCC unroll 4
            for (int r = 0; r < kMinVectors; ++r) {
                const __m512i lanes = _mm512_madd_epi16(
                    _mm512_load_si512(reinterpret_cast<const __m512i*>(panel[i].sub_sums[4 * r])),
                    min16);
                const __m512 neg_dmin =
                    _mm512_mul_ps(_mm512_set1_ps(dmin_w), _mm512_load_ps(panel[i].neg_d + 16 * r));
                mins[r] = _mm512_fmadd_ps(neg_dmin, _mm512_cvtepi32_ps(lanes), mins[r]);
            }
        }
        asm("" : "+m"(scales));  // see PairTile in gemm_pairs_avx512.cpp
        // Pass 2: the integer sums and the accumulation.
        const __m512i low4 = _mm512_set1_epi8(0x0f);
        __m512 acc[kPairs];
#pragma GCC unroll 8
        for (int p = 0; p < kPairs; ++p) acc[p] = _mm512_setzero_ps();
        for (int64_t i = 0; i < n_blocks; ++i) {
            __m512i sums[kPairs];
#pragma GCC unroll 8
            for (int p = 0; p < kPairs; ++p) sums[p] = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles), 2c + 1
                const __m512i packed = doubled_32(row[i].qs + 32 * c);
                const __m512i q_lo = _mm512_and_si512(packed, low4);
                const __m512i q_hi = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
                const __m512i scale_lo = _mm512_set1_epi16(sub_scales[i][2 * c]);
                const __m512i scale_hi = _mm512_set1_epi16(sub_scales[i][2 * c + 1]);
#pragma GCC unroll 8
                for (int p = 0; p < kPairs; ++p) {
                    sums[p] = add_scaled_dot(sums[p], q_lo, panel[i].qs[2 * c][p], scale_lo);
                    sums[p] = add_scaled_dot(sums[p], q_hi, panel[i].qs[2 * c + 1][p], scale_hi);
                }
            }
#pragma GCC unroll 8
            for (int p = 0; p < kPairs; ++p) {
                acc[p] =
                    _mm512_fmadd_ps(pair_scale(scales[i], p), _mm512_cvtepi32_ps(sums[p]), acc[p]);
            }
        }
        _mm512_storeu_ps(res[0], reduce_pairs(padded(acc)));
        // The min lanes of each row in vec_dot's order: (m0 + m2) + (m1 + m3).
        alignas(64) float min_sums[kMinVectors][16];
#pragma GCC unroll 4
        for (int r = 0; r < kMinVectors; ++r) {
            const __m512 halves = _mm512_add_ps(mins[r], _mm512_shuffle_ps(mins[r], mins[r], 0x4e));
            _mm512_store_ps(min_sums[r],
                            _mm512_add_ps(halves, _mm512_shuffle_ps(halves, halves, 0xb1)));
        }
        for (int t = 0; t < 2 * kPairs; ++t) res[0][t] += min_sums[t / 4][4 * (t % 4)];
    }
};

// Per output, as vec_dot_q6_k_q8_k: per super-block acc += (d_a * d_w) * the
// int32 lane sums of group_scale * q * y minus 32 * (scale * bsum) of groups
// 2k and 2k + 1 in lane k; result hsum(acc). In the doubled layout a 32-byte
// chunk's two groups fall in the low and high 256 bits, and the bsum term
// is one more vpdpwssd of the panel's paired bsums with -32 * scales.
template <int kPairs>
struct Q6_KPairTile {
    LADDER_AVX512 static void run(const BlockQ6_K* const* w, const PanelBlockQ8_K* panel,
                                  int64_t n_blocks, float (*res)[kPanelRows]) {
        const BlockQ6_K* row = w[0];
        alignas(64) float scales[kMaxSuperBlocks][kPanelRows];
        for (int64_t i = 0; i < n_blocks; ++i) {
            _mm512_store_ps(scales[i], _mm512_mul_ps(_mm512_set1_ps(half_to_float(row[i].d)),
                                                     _mm512_load_ps(panel[i].d)));
        }
        asm("" : "+m"(scales));  // see PairTile in gemm_pairs_avx512.cpp
        const __m512i low4 = _mm512_set1_epi8(0x0f);
        const __m512i bits45 = _mm512_set1_epi8(0x30);
        // Word lanes 0..15 take group g's scale, 16..31 group g + 1's.
        const __m512i group_pair =
            _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(1), 1);
        __m512 acc[kPairs];
#pragma GCC unroll 8
        for (int p = 0; p < kPairs; ++p) acc[p] = _mm512_setzero_ps();
        for (int64_t i = 0; i < n_blocks; ++i) {
            const __m512i sc16 = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(row[i].scales))));
            // -32 * scale as the pairs (2k, 2k + 1) the bsum dwords meet.
            const __m512i bias_scales = _mm512_permutexvar_epi32(
                _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
                _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(sc16, 5)));
            __m512i sums[kPairs];
#pragma GCC unroll 8
            for (int p = 0; p < kPairs; ++p) {
                sums[p] = _mm512_dpwssd_epi32(
                    _mm512_setzero_si512(),
                    _mm512_load_si512(reinterpret_cast<const __m512i*>(panel[i].bsums[p])),
                    bias_scales);
            }
#pragma GCC unroll 2
            for (int half = 0; half < 2; ++half) {  // 128 elements each
                const __m512i ql0 = doubled_32(row[i].ql + 64 * half);
                const __m512i ql1 = doubled_32(row[i].ql + 64 * half + 32);
                const __m512i qh = doubled_32(row[i].qh + 32 * half);
                // Elements 0..31, 32..63, 64..95, 96..127 of this half.
                const __m512i q[4] = {
                    _mm512_or_si512(_mm512_and_si512(ql0, low4),
                                    _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45)),
                    _mm512_or_si512(_mm512_and_si512(ql1, low4),
                                    _mm512_and_si512(_mm512_slli_epi16(qh, 2), bits45)),
                    _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql0, 4), low4),
                                    _mm512_and_si512(qh, bits45)),
                    _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql1, 4), low4),
                                    _mm512_and_si512(_mm512_srli_epi16(qh, 2), bits45)),
                };
#pragma GCC unroll 4
                for (int k = 0; k < 4; ++k) {
                    const int g = 8 * half + 2 * k;  // groups g (low 256 bits) and g + 1
                    const __m512i group_scales = _mm512_permutexvar_epi16(
                        _mm512_add_epi16(group_pair, _mm512_set1_epi16(static_cast<short>(g))),
                        sc16);
#pragma GCC unroll 8
                    for (int p = 0; p < kPairs; ++p) {
                        sums[p] = add_scaled_dot(sums[p], q[k], panel[i].qs[4 * half + k][p],
                                                 group_scales);
                    }
                }
            }
#pragma GCC unroll 8
            for (int p = 0; p < kPairs; ++p) {
                acc[p] =
                    _mm512_fmadd_ps(pair_scale(scales[i], p), _mm512_cvtepi32_ps(sums[p]), acc[p]);
            }
        }
        _mm512_storeu_ps(res[0], reduce_pairs(padded(acc)));
    }
};

template <template <int> class Tile, typename WeightBlock>
void run(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
         const void* activations, size_t activation_row_bytes, int64_t n_activation_rows, int64_t n,
         float* out, int64_t out_stride) {
    run_pair_tiles<WeightBlock, BlockQ8_K, PanelBlockQ8_K, 1, Tile>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

}  // namespace

void gemm_pairs_q4_k_q8_k(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    run<Q4_KPairTile, BlockQ4_K>(weights, weight_row_bytes, n_weight_rows, activations,
                                 activation_row_bytes, n_activation_rows, n, out, out_stride);
}

void gemm_pairs_q6_k_q8_k(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    run<Q6_KPairTile, BlockQ6_K>(weights, weight_row_bytes, n_weight_rows, activations,
                                 activation_row_bytes, n_activation_rows, n, out, out_stride);
}

}  // namespace ladder::kernels::cpu::detail
