// Internal to kernels/cpu: the AVX2 single-row dot product (VecDotFn) and the
// multi-row kernel (GemmFn) of a weight type, both built from one per-block
// step, so that a new type is a block step and a row in the table, not a
// copied tile loop.
//
// A block kernel K says, for one weight block and one activation block:
//   using Weight, Activation;             the block types
//   static constexpr int kBlockElements;  elements per block
//   struct Acc;                           one output's running state, zero
//                                         when value-initialized
//   using Unpacked;                       a weight block's codes, formed once
//   static Unpacked unpack(const Weight&);
//   static void step(const Unpacked&, const Weight&, const Activation&, Acc&);
//   static float finish(const Acc&);
// block_vec_dot runs step over the blocks of one row pair in order; a tile
// unpacks each weight block once and runs the same step for each of its
// activation rows, one Acc per output. Each output therefore sees exactly the
// operations of block_vec_dot in the same order, and the two agree bit for bit
// (gemm_tiles.h) whatever the tiling, T or thread count.
//
// An Acc is never returned by value from a function that may stay out of
// line: with GCC 12, a row loop that returned its Acc (one __m256) from an
// out-of-line target("avx2") call gave Q2_K and Q3_K wrong sums, which the
// kernel tests caught; kept in the caller's frame it is right.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/simd_x86.h"

namespace ladder::kernels::cpu::detail {

template <typename K>
LADDER_AVX2 float block_vec_dot(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const typename K::Weight*>(weights);
    const auto* a = static_cast<const typename K::Activation*>(activations);
    typename K::Acc acc{};
    for (int64_t i = 0; i < n / K::kBlockElements; ++i) K::step(K::unpack(w[i]), w[i], a[i], acc);
    return K::finish(acc);
}

template <typename K, int kT>
struct BlockTiles {
    template <int kRowsW, int kRows>
    struct Tile {
        LADDER_AVX2 static void run(const typename K::Weight* const* w,
                                    const typename K::Activation* const* a, int64_t n_blocks,
                                    float (*res)[kT]) {
            typename K::Acc acc[kRowsW][kRows] = {};
            for (int64_t i = 0; i < n_blocks; ++i) {
#pragma GCC unroll 8
                for (int j = 0; j < kRowsW; ++j) {
                    const auto codes = K::unpack(w[j][i]);
#pragma GCC unroll 8
                    for (int t = 0; t < kRows; ++t) K::step(codes, w[j][i], a[t][i], acc[j][t]);
                }
            }
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) res[j][t] = K::finish(acc[j][t]);
            }
        }
    };
};

// The GemmFn of K: tiles of kW weight rows x up to kT activation rows. With
// one activation row (decode) the kW rows are kW independent chains of
// fused multiply-adds, where one vec_dot per row would wait on one.
template <typename K, int kW, int kT>
void block_gemm(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                int64_t n, float* out, int64_t out_stride) {
    using W = typename K::Weight;
    using A = typename K::Activation;
    static constexpr auto kTiles = make_tile_table<W, A, kW, kT, BlockTiles<K, kT>::template Tile>(
        std::make_index_sequence<kT>{});
    run_tiles<W, A, kW, kT>(kTiles, K::kBlockElements, weights, weight_row_bytes, n_weight_rows,
                            activations, activation_row_bytes, n_activation_rows, n, out,
                            out_stride);
}

}  // namespace ladder::kernels::cpu::detail
