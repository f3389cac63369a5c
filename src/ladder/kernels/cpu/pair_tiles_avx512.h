// Internal to kernels/cpu: what the AVX-512 pair tiles share: the doubled
// weight codes, the scale pairs, the lane-sum tree, and the GemmFn driver that
// runs a tile table over panels (pair_panel_avx512.h).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "ladder/kernels/cpu/gemm_pairs_avx512.h"
#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/pair_panel_avx512.h"

namespace ladder::kernels::cpu::detail {

// The pair of floats scale[2p], scale[2p + 1] in every 64-bit lane: lane 2k
// gets row 2p's scale, lane 2k + 1 row 2p + 1's, matching the panel's layout.
LADDER_AVX512 inline __m512 pair_scale(const float* scale, int p) {
    double pair = 0.0;
    std::memcpy(&pair, scale + 2 * p, sizeof pair);
    return _mm512_castpd_ps(_mm512_set1_pd(pair));
}

// One weight row's accumulators over a full panel.
struct PairAccumulators {
    __m512 pair[kPanelPairs];
};

// The 16 outputs of 8 pair accumulators (pair p: lanes 2k, 2k + 1 hold
// lane k of rows 2p, 2p + 1), each summed in hsum's tree ((0 + 4) + (2 + 6)) +
// ((1 + 5) + (3 + 7)), in row order. Each step adds the same two partial sums
// hsum adds, for 16 outputs at once: a shuffle tree per output (hsum) cost a
// third as much as the dot loop itself at n = 576.
LADDER_AVX512 inline __m512 reduce_pairs(const PairAccumulators& acc) {
    // Lanes k + 4 onto lanes k: the 256-bit halves of two accumulators at once.
    // half[m] 128-bit chunks: pair 2m's s_0, s_1 | s_2, s_3; then pair 2m + 1's.
    __m512 half[4];
    for (int m = 0; m < 4; ++m) {
        half[m] = _mm512_add_ps(_mm512_shuffle_f32x4(acc.pair[2 * m], acc.pair[2 * m + 1], 0x44),
                                _mm512_shuffle_f32x4(acc.pair[2 * m], acc.pair[2 * m + 1], 0xee));
    }
    // s_k + s_(k+2): chunk c of quarter[m] holds pair 4m + c's (s0 + s2, s1 + s3).
    __m512 quarter[2];
    for (int m = 0; m < 2; ++m) {
        quarter[m] = _mm512_add_ps(_mm512_shuffle_f32x4(half[2 * m], half[2 * m + 1], 0x88),
                                   _mm512_shuffle_f32x4(half[2 * m], half[2 * m + 1], 0xdd));
    }
    // (s0 + s2) + (s1 + s3): chunk c holds rows 2c, 2c + 1, 8 + 2c, 9 + 2c.
    const __m512 sums = _mm512_add_ps(_mm512_shuffle_ps(quarter[0], quarter[1], 0x44),
                                      _mm512_shuffle_ps(quarter[0], quarter[1], 0xee));
    const __m512i row_order =
        _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    return _mm512_permutexvar_ps(row_order, sums);
}

// A tile's kPairs accumulators of one weight row, with zeros for the pairs a
// short panel lacks (their sums are dropped).
template <int kPairs>
LADDER_AVX512 inline PairAccumulators padded(const __m512 (&acc)[kPairs]) {
    PairAccumulators all;
#pragma GCC unroll 8
    for (int p = 0; p < kPanelPairs; ++p) all.pair[p] = p < kPairs ? acc[p] : _mm512_setzero_ps();
    return all;
}

inline uint32_t load_u32(const void* p) {
    uint32_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The 32 4-bit codes of a legacy block's 16 bytes, one per byte, each dword
// doubled for the pair layout: lanes 2k and 2k + 1 both hold codes 4k..4k + 3
// (lanes 0..7 the low nibbles, codes 0..15; lanes 8..15 the high ones).
LADDER_AVX512 inline __m512i doubled_nibbles(const uint8_t* qs) {
    const __m512i double_dwords = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3);
    const __m512i nibble_shift = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4);
    const __m512i packed =
        _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    return _mm512_and_si512(
        _mm512_srlv_epi32(_mm512_permutexvar_epi32(double_dwords, packed), nibble_shift),
        _mm512_set1_epi8(0x0f));
}

template <typename WeightBlock, typename PanelBlock>
using PairTileFn = void (*)(const WeightBlock* const* w, const PanelBlock* panel, int64_t n_blocks,
                            float (*res)[kPanelRows]);

// by_pairs[n - 1] is the tile for n pairs of activation rows.
template <typename WeightBlock, typename PanelBlock, template <int> class Tile, size_t... kPairs>
constexpr std::array<PairTileFn<WeightBlock, PanelBlock>, sizeof...(kPairs)> make_pair_tiles(
    std::index_sequence<kPairs...>) {
    return {&Tile<static_cast<int>(kPairs) + 1>::run...};
}

// The GemmFn contract over panels: activation rows 16 at a time, re-laid out
// once into a panel that stays in L1 while every group of kRowsW weight rows
// of the call passes over it. A last group short of kRowsW repeats its final
// row; those results are dropped, as are the padding rows of a panel.
template <typename WeightBlock, typename ActivationBlock, typename PanelBlock, int kRowsW,
          template <int> class Tile>
void run_pair_tiles(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                    int64_t n, float* out, int64_t out_stride) {
    static constexpr auto kTiles =
        make_pair_tiles<WeightBlock, PanelBlock, Tile>(std::make_index_sequence<kPanelPairs>{});
    const auto* a_base = static_cast<const char*>(activations);
    const int64_t n_blocks = n / PanelBlock::kElements;
    PanelBlock panel[kMaxPairWidth / PanelBlock::kElements];
    for (int64_t t0 = 0; t0 < n_activation_rows; t0 += kPanelRows) {
        const int n_t = static_cast<int>(std::min<int64_t>(kPanelRows, n_activation_rows - t0));
        const ActivationBlock* a[kPanelRows] = {};
        for (int t = 0; t < n_t; ++t) {
            a[t] = reinterpret_cast<const ActivationBlock*>(a_base + static_cast<size_t>(t0 + t) *
                                                                         activation_row_bytes);
        }
        build_panel(a, n_t, n_blocks, panel);
        const auto tile = kTiles[static_cast<size_t>((n_t + 1) / 2 - 1)];
        for (int64_t r0 = 0; r0 < n_weight_rows; r0 += kRowsW) {
            const int64_t n_w = std::min<int64_t>(kRowsW, n_weight_rows - r0);
            const WeightBlock* w[kRowsW];
            tile_weight_rows(weights, weight_row_bytes, r0, n_w, w);
            float res[kRowsW][kPanelRows];
            tile(w, panel, n_blocks, res);
            for (int t = 0; t < n_t; ++t) {
                for (int64_t j = 0; j < n_w; ++j) out[(t0 + t) * out_stride + r0 + j] = res[j][t];
            }
        }
    }
}

}  // namespace ladder::kernels::cpu::detail
