// Internal to kernels/cpu: cuts one GemmFn call into register tiles of kW
// weight rows x up to kT activation rows, for the per-ISA multi-row kernels.
//
// Why the results match vec_dot bit for bit: a tile kernel unpacks each weight
// block once and applies it to every activation row of the tile, but keeps one
// accumulator (and one running offset or min term) per output and updates it
// with exactly the operations, in exactly the order, the single-row kernel
// uses: the same per-block integer lane sums, the same scale products and
// fused multiply-adds, the same final lane tree. Tiles only change which
// outputs are computed side by side, never what any output sees, so nothing
// depends on T, on the tiling or on the thread count.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace ladder::kernels::cpu::detail {

// One tile: kW weight rows w[j] and n activation rows a[t] (n fixed per
// instantiation) over n_blocks blocks; writes res[j][t] for t < n.
template <typename WeightBlock, typename ActivationBlock, int kW, int kT>
using TileFn = void (*)(const WeightBlock* const* w, const ActivationBlock* const* a,
                        int64_t n_blocks, float (*res)[kT]);

// by_rows[n - 1] is the tile for n activation rows, so a tail of T runs with
// no wasted work (T = 1 is decode, where waste would cost the most).
template <typename WeightBlock, typename ActivationBlock, int kW, int kT>
using TileTable = std::array<TileFn<WeightBlock, ActivationBlock, kW, kT>, kT>;

// (A TileTable for tiles with TileFn's signature; an array of whatever
// pointer type their run has otherwise.)
template <typename WeightBlock, typename ActivationBlock, int kW, int kT,
          template <int, int> class Tile, size_t... kRows>
constexpr auto make_tile_table(std::index_sequence<kRows...>) {
    return std::array{&Tile<kW, static_cast<int>(kRows) + 1>::run...};
}

// Row r of a matrix of blocks stored row_bytes apart.
template <typename Block>
const Block* block_row(const void* rows, size_t row_bytes, int64_t r) {
    return reinterpret_cast<const Block*>(static_cast<const char*>(rows) +
                                          static_cast<size_t>(r) * row_bytes);
}

// Weight rows r0..r0 + kW - 1 of a tile; a last group short of kW (n_w rows)
// repeats its final row, whose results the caller drops.
template <typename WeightBlock, int kW>
void tile_weight_rows(const void* weights, size_t weight_row_bytes, int64_t r0, int64_t n_w,
                      const WeightBlock* (&w)[kW]) {
    for (int j = 0; j < kW; ++j) {
        w[j] =
            block_row<WeightBlock>(weights, weight_row_bytes, r0 + std::min<int64_t>(j, n_w - 1));
    }
}

// The GemmFn contract (vec_dot.h) over tiles, the tile left to the caller:
// on_weights(w) once for each weight-row group before its tiles, then
// run_tile(w, a, t0, n_t, res) for activation rows t0 .. t0 + n_t - 1.
// Weight-row groups are the outer loop so a group's rows stay in L1 while the
// activation rows stream past. A last group short of kW repeats its final
// row; those results are dropped.
template <typename WeightBlock, typename ActivationBlock, int kW, int kT, typename OnWeights,
          typename RunTile>
void for_each_tile(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                   const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                   float* out, int64_t out_stride, OnWeights&& on_weights, RunTile&& run_tile) {
    for (int64_t r0 = 0; r0 < n_weight_rows; r0 += kW) {
        const int64_t n_w = std::min<int64_t>(kW, n_weight_rows - r0);
        const WeightBlock* w[kW];
        tile_weight_rows(weights, weight_row_bytes, r0, n_w, w);
        on_weights(static_cast<const WeightBlock* const*>(w));
        for (int64_t t0 = 0; t0 < n_activation_rows; t0 += kT) {
            const int64_t n_t = std::min<int64_t>(kT, n_activation_rows - t0);
            const ActivationBlock* a[kT] = {};
            for (int64_t t = 0; t < n_t; ++t) {
                a[t] = block_row<ActivationBlock>(activations, activation_row_bytes, t0 + t);
            }
            float res[kW][kT];
            run_tile(static_cast<const WeightBlock* const*>(w),
                     static_cast<const ActivationBlock* const*>(a), t0, n_t, res);
            for (int64_t t = 0; t < n_t; ++t) {
                for (int64_t j = 0; j < n_w; ++j) out[(t0 + t) * out_stride + r0 + j] = res[j][t];
            }
        }
    }
}

// for_each_tile with a table's tile for each tile's row count.
template <typename WeightBlock, typename ActivationBlock, int kW, int kT>
void run_tiles(const TileTable<WeightBlock, ActivationBlock, kW, kT>& tiles, int64_t block_elements,
               const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
               const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
               int64_t n, float* out, int64_t out_stride) {
    const int64_t n_blocks = n / block_elements;
    for_each_tile<WeightBlock, ActivationBlock, kW, kT>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, out, out_stride, [](const WeightBlock* const*) {},
        [&](const WeightBlock* const* w, const ActivationBlock* const* a, int64_t, int64_t n_t,
            float(*res)[kT]) { tiles[static_cast<size_t>(n_t - 1)](w, a, n_blocks, res); });
}

}  // namespace ladder::kernels::cpu::detail
