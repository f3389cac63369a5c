// AVX-512 VNNI multi-row kernels for many activation rows, Q4_1, Q8_0 and
// Q5_0 weights: each 512-bit vector carries two outputs, so the integer dot,
// the conversion and the fma each serve two outputs per instruction (zmm runs
// at the same rate as ymm on CPUs with two 512-bit FMA units). Results stay
// those of the table's vec_dot bit for bit: gemm_tiles.h says why; the lane
// layout is the only new thing here and no lane ever meets another output's.
#include "ladder/kernels/cpu/gemm_pairs_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ladder/kernels/cpu/pair_panel_avx512.h"
#include "ladder/kernels/cpu/pair_tiles_avx512.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ4_1;
using tensor::BlockQ5_0;

constexpr int kW = 2;  // weight rows per tile

// A weight type's side of a pair tile, per block of a weight row (whose
// first 4 bytes hold the half d_w, and for Q4_1 m_w, as gather_block_heads
// reads them):
//   codes: the block's codes, each dword doubled (lanes 2k, 2k + 1 hold
//     codes 4k..4k + 3) to meet a panel pair;
//   start, lane_sums: the pair's int32 lane sums of code * activation, the
//     integers the vec_dot's lane k sums (exact, so formed any exact way).

// Q4_1 x Q8_1, as the Q4_1 block kernel (block_kernels_x86.h): per output
// acc += (d_w * d_a) * lane sums by one fma per block, offsets += m_w * s_a
// by one fma per block, result hsum(acc) + offsets. Nibbles are unsigned, vpdpbusd's first operand.
struct Q4_1Pairs {
    using Block = BlockQ4_1;
    using Panel = PanelBlockQ8_1;
    static constexpr bool kOffsets = true;

    LADDER_AVX512 static __m512i codes(const Block& b) { return doubled_nibbles(b.qs); }
    LADDER_AVX512 static __m512i start(__m512i) { return _mm512_setzero_si512(); }
    LADDER_AVX512 static __m512i lane_sums(__m512i start, __m512i codes, const void* pair) {
        return _mm512_dpbusd_epi32(start, codes,
                                   _mm512_load_si512(static_cast<const __m512i*>(pair)));
    }
};

// For byte 4L + m of a doubled block (code c = 4 * (L / 2) + m): which byte of
// qh holds c's fifth bit, and that bit as a mask.
struct Q5_0HighBitTables {
    alignas(64) uint8_t byte[64];
    alignas(64) uint8_t bit[64];
};

constexpr Q5_0HighBitTables make_q5_0_high_bit_tables() {
    Q5_0HighBitTables t{};
    for (int b = 0; b < 64; ++b) {
        const int code = 4 * (b / 8) + b % 4;
        t.byte[b] = static_cast<uint8_t>(code / 8);
        t.bit[b] = static_cast<uint8_t>(1 << (code % 8));
    }
    return t;
}

constexpr Q5_0HighBitTables kQ5_0HighBits = make_q5_0_high_bit_tables();

// Signed codes, doubled: Q8_0's bytes as they are.
struct Q8_0Codes {
    using Block = BlockQ8_0;
    LADDER_AVX512 static __m512i doubled(const BlockQ8_0& b) {
        const __m512i double_dwords =
            _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
        return _mm512_permutexvar_epi32(double_dwords, load_row_block(b.qs));
    }
};

// Q5_0's q - 16 (q's fifth bit from qh): the Q5_0 block kernel sums q * y - 16 * y,
// the same integers as (q - 16) * y.
struct Q5_0Codes {
    using Block = BlockQ5_0;
    LADDER_AVX512 static __m512i doubled(const BlockQ5_0& b) {
        const __m512i nibbles = doubled_nibbles(b.qs);
        const __m512i qh_bytes = _mm512_shuffle_epi8(
            _mm512_set1_epi32(static_cast<int>(load_u32(b.qh))),
            _mm512_load_si512(reinterpret_cast<const __m512i*>(kQ5_0HighBits.byte)));
        const __mmask64 clear = _mm512_testn_epi8_mask(
            qh_bytes, _mm512_load_si512(reinterpret_cast<const __m512i*>(kQ5_0HighBits.bit)));
        return _mm512_mask_sub_epi8(nibbles, clear, nibbles, _mm512_set1_epi8(16));
    }
};

// Signed codes x times Q8_0 activations, as the Q8_0 and Q5_0 block kernels
// (block_kernels_x86.h): per output acc += (d_w * d_a) * lane sums of x * y
// by one fma per block, result hsum(acc). vpdpbusd wants
// one unsigned side, so the panel holds y + 128 and the sums start from
// -128 * sum(x), which the weight row's codes give once for all 16 rows.
template <typename Codes>
struct SignedPairs {
    using Block = typename Codes::Block;
    using Panel = PanelBlockQ8_0;
    static constexpr bool kOffsets = false;

    LADDER_AVX512 static __m512i codes(const Block& b) { return Codes::doubled(b); }
    LADDER_AVX512 static __m512i start(__m512i x) {
        const __m512i bias_byte = _mm512_set1_epi8(static_cast<char>(0x80));
        return _mm512_sub_epi32(_mm512_setzero_si512(),
                                _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias_byte, x));
    }
    LADDER_AVX512 static __m512i lane_sums(__m512i start, __m512i x, const void* pair) {
        return _mm512_dpbusd_epi32(start, _mm512_load_si512(static_cast<const __m512i*>(pair)), x);
    }
};

// d_w (low 16 bits) and the next 2 bytes of blocks i0..i0 + 15 of a row
// (zeros past n_blocks): one gather instead of a conversion per block.
template <typename Block>
LADDER_AVX512 inline __m512i gather_block_heads(const Block* row, int64_t i0, int64_t n_blocks) {
    const __m512i offsets =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(static_cast<int>(sizeof(Block))));
    const int64_t n_live = std::min<int64_t>(16, n_blocks - i0);
    const auto live = static_cast<__mmask16>((1u << n_live) - 1);
    return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, offsets, row + i0, 1);
}

// kW weight rows x kPairs pairs of panel rows: per output, the accumulation of
// the weight type's vec_dot (above), with 16 rows' scale products and offsets
// as one vector each.
template <typename Weights, int kPairs>
struct PairTile {
    using Block = typename Weights::Block;
    using Panel = typename Weights::Panel;

    LADDER_AVX512 static void run(const Block* const* w, const Panel* panel, int64_t n_blocks,
                                  float (*res)[kPanelRows]) {
        // Pass 1: every block's scale products (and offsets). Neither needs the
        // integer sums, so doing them first keeps the half conversions and the
        // store-to-load trip off the dot loop's critical path.
        alignas(64) float scales[kMaxPairWidth / tensor::kQK][kW][kPanelRows];
        __m512 offsets[kW];  // lane t: row t's offsets
#pragma GCC unroll 8
        for (int j = 0; j < kW; ++j) offsets[j] = _mm512_setzero_ps();
        for (int64_t i0 = 0; i0 < n_blocks; i0 += 16) {
            alignas(64) float d[kW][16];  // d_w of blocks i0..i0 + 15
            alignas(64) float m[kW][16];
#pragma GCC unroll 8
            for (int j = 0; j < kW; ++j) {
                const __m512i halves = gather_block_heads(w[j], i0, n_blocks);  // d | m << 16
                _mm512_store_ps(d[j], _mm512_cvtph_ps(_mm512_cvtepi32_epi16(halves)));
                _mm512_store_ps(
                    m[j], _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(halves, 16))));
            }
            asm("" : "+m"(d), "+m"(m));  // read back by broadcast loads
            const int64_t n_here = std::min<int64_t>(16, n_blocks - i0);
            for (int64_t k = 0; k < n_here; ++k) {
                const Panel& a = panel[i0 + k];
#pragma GCC unroll 8
                for (int j = 0; j < kW; ++j) {
                    _mm512_store_ps(scales[i0 + k][j],
                                    _mm512_mul_ps(_mm512_set1_ps(d[j][k]), _mm512_load_ps(a.d)));
                    if constexpr (Weights::kOffsets) {
                        offsets[j] = _mm512_fmadd_ps(_mm512_set1_ps(m[j][k]), _mm512_load_ps(a.s),
                                                     offsets[j]);
                    }
                }
            }
        }
        // Read back by one broadcast load per pair: without this GCC rebuilds
        // each pair from the product in registers, with shuffles on an FMA port.
        asm("" : "+m"(scales));
        // Pass 2: the integer dots and the accumulation.
        __m512 acc[kW][kPairs];
#pragma GCC unroll 8
        for (int j = 0; j < kW; ++j) {
#pragma GCC unroll 8
            for (int p = 0; p < kPairs; ++p) acc[j][p] = _mm512_setzero_ps();
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
#pragma GCC unroll 8
            for (int j = 0; j < kW; ++j) {
                const __m512i codes = Weights::codes(w[j][i]);
                const __m512i start = Weights::start(codes);
#pragma GCC unroll 8
                for (int p = 0; p < kPairs; ++p) {
                    const __m512i sums = Weights::lane_sums(start, codes, panel[i].qs[p]);
                    acc[j][p] = _mm512_fmadd_ps(pair_scale(scales[i][j], p),
                                                _mm512_cvtepi32_ps(sums), acc[j][p]);
                }
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < kW; ++j) {
            __m512 sums = reduce_pairs(padded(acc[j]));
            if constexpr (Weights::kOffsets) sums = _mm512_add_ps(sums, offsets[j]);
            _mm512_storeu_ps(res[j], sums);
        }
    }
};

template <typename Weights>
struct PairTiles {
    template <int kPairs>
    using Tile = PairTile<Weights, kPairs>;
};

template <typename Weights, typename ActivationBlock>
void run(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
         const void* activations, size_t activation_row_bytes, int64_t n_activation_rows, int64_t n,
         float* out, int64_t out_stride) {
    run_pair_tiles<typename Weights::Block, ActivationBlock, typename Weights::Panel, kW,
                   PairTiles<Weights>::template Tile>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

}  // namespace

void gemm_pairs_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    run<Q4_1Pairs, BlockQ8_1>(weights, weight_row_bytes, n_weight_rows, activations,
                              activation_row_bytes, n_activation_rows, n, out, out_stride);
}

void gemm_pairs_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    run<SignedPairs<Q8_0Codes>, BlockQ8_0>(weights, weight_row_bytes, n_weight_rows, activations,
                                           activation_row_bytes, n_activation_rows, n, out,
                                           out_stride);
}

void gemm_pairs_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                          const void* activations, size_t activation_row_bytes,
                          int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    run<SignedPairs<Q5_0Codes>, BlockQ8_0>(weights, weight_row_bytes, n_weight_rows, activations,
                                           activation_row_bytes, n_activation_rows, n, out,
                                           out_stride);
}

}  // namespace ladder::kernels::cpu::detail
