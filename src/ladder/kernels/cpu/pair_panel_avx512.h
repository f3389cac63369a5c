// Internal to kernels/cpu: the activation panel of the AVX-512 pair kernels.
// Up to 16 activation rows of a GemmFn call are re-laid out once, two rows per
// 512-bit vector, so that the dot loop over every weight row only loads.
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma once

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

using tensor::BlockQ8_0;
using tensor::BlockQ8_1;

// Activation rows per panel, and so per pass over the weight rows: 8 pairs,
// 8 accumulators per weight row of a tile, half the 32 vector registers for
// the legacy tiles' 2 rows.
constexpr int kPanelRows = 16;
constexpr int kPanelPairs = kPanelRows / 2;

// One block of up to 16 activation rows, laid out once per panel so that the
// inner loop only loads: pair p's 32 + 32 bytes interleaved by dword (lane 2k
// holds row 2p's bytes 4k..4k+3, lane 2k + 1 row 2p + 1's), so vpdpbusd's
// lane 2k is row 2p's lane k of vec_dot, exactly; scales as floats.
struct alignas(64) PanelBlockQ8_1 {
    static constexpr int64_t kElements = tensor::kQK;
    int8_t qs[kPanelPairs][64];
    float d[kPanelRows];
    float s[kPanelRows];
};

// Q8_0 activations go in as y + 128 (unsigned, as vpdpbusd wants one side):
// see SignedPairs in gemm_pairs_avx512.cpp for the exact correction.
struct alignas(64) PanelBlockQ8_0 {
    static constexpr int64_t kElements = tensor::kQK;
    uint8_t qs[kPanelPairs][64];
    float d[kPanelRows];
};

LADDER_AVX512 inline __m512i load_row_block(const int8_t* qs) {
    return _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)));
}

// Dword k of a and of b to lanes 2k and 2k + 1.
LADDER_AVX512 inline __m512i interleave_dwords(__m512i a, __m512i b) {
    const __m512i idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    return _mm512_permutex2var_epi32(a, idx, b);
}

// The quantized bytes of rows t0..t0 + n_t - 1 (n_t <= 16) of block i, paired;
// a missing second row of the last pair is zeros (its outputs are dropped).
template <typename ActivationBlock>
LADDER_AVX512 inline void pair_rows(const ActivationBlock* const* a, int n_t, int64_t i,
                                    __m512i bias, void* out) {
    auto* dst = static_cast<__m512i*>(out);
    for (int p = 0; 2 * p < n_t; ++p) {
        const __m512i first = load_row_block(a[2 * p][i].qs);
        const __m512i second =
            2 * p + 1 < n_t ? load_row_block(a[2 * p + 1][i].qs) : _mm512_setzero_si512();
        _mm512_store_si512(dst + p, _mm512_xor_si512(interleave_dwords(first, second), bias));
    }
}

// The first 4 bytes of block i of rows 0..n_t - 1 (zeros for the others),
// where every activation block keeps its 16-bit scales: one gather for 16 rows.
template <typename ActivationBlock>
LADDER_AVX512 inline __m512i gather_scale_bits(const ActivationBlock* const* a, __m512i row_offsets,
                                               int n_t, int64_t i) {
    const auto live = static_cast<__mmask16>((1u << n_t) - 1);
    return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, row_offsets, a[0] + i, 1);
}

// Byte offsets of rows 0..15 from row 0 (the rows are evenly spaced).
template <typename ActivationBlock>
LADDER_AVX512 inline __m512i row_offsets(const ActivationBlock* const* a, int n_t) {
    const auto* first = reinterpret_cast<const char*>(a[0]);
    const auto stride = n_t > 1 ? static_cast<int>(reinterpret_cast<const char*>(a[1]) - first) : 0;
    return _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(stride));
}

LADDER_AVX512 inline void build_panel(const BlockQ8_1* const* a, int n_t, int64_t n_blocks,
                                      PanelBlockQ8_1* panel) {
    const __m512i offsets = row_offsets(a, n_t);
    for (int64_t i = 0; i < n_blocks; ++i) {
        pair_rows(a, n_t, i, _mm512_setzero_si512(), panel[i].qs);
        const __m512i d_s = gather_scale_bits(a, offsets, n_t, i);  // d | s << 16
        _mm512_store_ps(panel[i].d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d_s)));
        _mm512_store_ps(panel[i].s,
                        _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(d_s, 16))));
    }
}

LADDER_AVX512 inline void build_panel(const BlockQ8_0* const* a, int n_t, int64_t n_blocks,
                                      PanelBlockQ8_0* panel) {
    const __m512i offsets = row_offsets(a, n_t);
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int64_t i = 0; i < n_blocks; ++i) {
        // Padding rows become 0x80 bytes: harmless, their outputs are dropped.
        pair_rows(a, n_t, i, bias, panel[i].qs);
        const __m512i d_bits = gather_scale_bits(a, offsets, n_t, i);  // d | qs[0..1] << 16
        _mm512_store_ps(panel[i].d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d_bits)));
    }
}

}  // namespace ladder::kernels::cpu::detail
