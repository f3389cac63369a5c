// Internal to kernels/cpu: the kernels for a single activation row (decode),
// which reads each weight once and so must keep pace with memory
// (gemv_avx512.cpp, gemv_avx2.cpp), and the GemmFn that routes T = 1 to them.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <xmmintrin.h>

#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu::detail {

// Weight rows the kernels take together; a matrix needs at least this many.
constexpr int kGemvRows = 8;

// out[r] = the table's vec_dot(weight row r, activation) bit for bit, r < n_weight_rows.
using GemvFn = void (*)(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activation, int64_t n, float* out);

// AVX-512 VNNI (gemv_avx512.cpp): as the avx512 table's vec_dots.
void gemv_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);
void gemv_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);
void gemv_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);
void gemv_q4_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);
void gemv_q5_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out);

// The same kernels for a few activation rows at once (verifying drafted
// tokens): each weight-row group's heads and codes are formed once and met by
// every row, so the weights are read once; every output is the T = 1
// kernel's (the table's vec_dot) bit for bit. A GemmFn; n_weight_rows >= kGemvRows.
void few_rows_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q4_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q5_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

// AVX2 (gemv_avx2.cpp): as the avx2 table's vec_dots.
void gemv_q4_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out);
void few_rows_q4_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q8_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q5_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q4_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void few_rows_q5_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);
void gemv_q8_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out);
void gemv_q5_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out);
void gemv_q4_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out);
void gemv_q5_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out);

// The rows of a gemv in groups of kGemvRows: kGroup(rows, row_bytes,
// activation, n_blocks, out) computes kGemvRows outputs from `rows` on. A
// last group short of kGemvRows takes the last kGemvRows rows again (some
// computed twice, with identical results), so no read passes the matrix.
template <typename Activation,
          void (*kGroup)(const char*, size_t, const Activation*, int64_t, float*)>
void for_each_row_group(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activation, int64_t n, float* out) {
    LADDER_CHECK(n_weight_rows >= kGemvRows, "gemv needs a whole group of weight rows");
    const auto* base = static_cast<const char*>(weights);
    const auto* a = static_cast<const Activation*>(activation);
    const int64_t n_blocks = n / tensor::kQK;
    int64_t r0 = 0;
    for (; r0 + kGemvRows <= n_weight_rows; r0 += kGemvRows) {
        kGroup(base + static_cast<size_t>(r0) * weight_row_bytes, weight_row_bytes, a, n_blocks,
               out + r0);
    }
    if (r0 == n_weight_rows) return;
    const int64_t last = n_weight_rows - kGemvRows;
    kGroup(base + static_cast<size_t>(last) * weight_row_bytes, weight_row_bytes, a, n_blocks,
           out + last);
}

// A GemmFn: one activation row runs kGemv when the matrix has a whole group of
// rows; otherwise, and for more rows, kOther.
template <GemmFn kOther, GemvFn kGemv>
void gemv_or(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
             const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
             int64_t n, float* out, int64_t out_stride) {
    if (n_activation_rows == 1 && n_weight_rows >= kGemvRows) {
        kGemv(weights, weight_row_bytes, n_weight_rows, activations, n, out);
        return;
    }
    kOther(weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
           n_activation_rows, n, out, out_stride);
}

// A GemmFn that runs one vec_dot of the path's table per output, as matmul
// does without a GemmFn: the other rows' kernel for types with no row tile.
template <Isa kIsa, tensor::DType kType>
void vec_dot_per_output(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    const VecDotFn dot = cpu_kernels_for(kIsa).vec_dot(kType);
    const auto* w = static_cast<const char*>(weights);
    const auto* a = static_cast<const char*>(activations);
    for (int64_t r = 0; r < n_weight_rows; ++r) {
        for (int64_t t = 0; t < n_activation_rows; ++t) {
            out[t * out_stride + r] = dot(w + static_cast<size_t>(r) * weight_row_bytes,
                                          a + static_cast<size_t>(t) * activation_row_bytes, n);
        }
    }
}

// Row r's block, given `blocks`, the first row's block, and the rows
// row_bytes apart. A group's heads and codes are all addressed from one
// pointer and multiples of row_bytes: eight row pointers beside the eight
// head addresses do not fit the registers, and the spills cost Zen 4's
// AVX-512 Q4_1 kernel about 7%.
template <typename Block>
const Block& row_block(const char* blocks, size_t row_bytes, int r) {
    return *reinterpret_cast<const Block*>(blocks + static_cast<size_t>(r) * row_bytes);
}

// Block i's share of the group two groups on (contiguous, a group's size),
// fetched while block i is computed: decode's matrices are small and each
// tile starts a new stream, so the hardware prefetcher alone leaves loads
// waiting on memory.
template <typename Block>
void prefetch_group_ahead(const char* rows, size_t row_bytes, int64_t i) {
    constexpr size_t kGroupBlockBytes = kGemvRows * sizeof(Block);
    const char* line = rows + 2 * kGemvRows * row_bytes + static_cast<size_t>(i) * kGroupBlockBytes;
#pragma GCC unroll 8
    for (size_t offset = 0; offset < kGroupBlockBytes; offset += 64) {
        _mm_prefetch(line + offset, _MM_HINT_T0);
    }
}

// A path's kernels for a group of kGemvRows weight rows:
// GroupDots<Weights, kT>::run(rows, row_bytes, a, n_blocks, res) writes
// res[t][r] for kT activation rows a[0..kT) and the weight rows from `rows` on.
template <typename Activation>
using GroupRunFn = void (*)(const char* rows, size_t row_bytes, const Activation* const* a,
                            int64_t n_blocks, float (*res)[kGemvRows]);

// runs[kT - 1] = GroupDots<Weights, kT>::run.
template <template <typename, int> class GroupDots, typename Weights, size_t... kIndex>
constexpr std::array<GroupRunFn<typename Weights::Activation>, sizeof...(kIndex)> group_runs(
    std::index_sequence<kIndex...>) {
    return {&GroupDots<Weights, static_cast<int>(kIndex) + 1>::run...};
}

// One activation row: a kGroup for for_each_row_group.
template <template <typename, int> class GroupDots, typename Weights>
void group_dots_one(const char* rows, size_t row_bytes, const typename Weights::Activation* a,
                    int64_t n_blocks, float* out) {
    GroupDots<Weights, 1>::run(rows, row_bytes, &a, n_blocks,
                               reinterpret_cast<float(*)[kGemvRows]>(out));
}

// The few-rows GemmFn over kGemvRows-row groups, in passes of at most
// kMaxPass activation rows (what the registers hold). A last group short of
// kGemvRows takes the last kGemvRows rows again, as for_each_row_group does.
template <template <typename, int> class GroupDots, typename Weights, int kMaxPass>
void few_rows_in_passes(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    using Activation = typename Weights::Activation;
    static constexpr auto kRuns =
        group_runs<GroupDots, Weights>(std::make_index_sequence<kMaxPass>{});
    LADDER_CHECK(n_weight_rows >= kGemvRows, "few_rows needs a whole group of weight rows");
    const auto* base = static_cast<const char*>(weights);
    const auto* a_base = static_cast<const char*>(activations);
    const int64_t n_blocks = n / tensor::kQK;
    for (int64_t r0 = 0; r0 < n_weight_rows; r0 += kGemvRows) {
        const int64_t first = std::min<int64_t>(r0, n_weight_rows - kGemvRows);
        const char* rows = base + static_cast<size_t>(first) * weight_row_bytes;
        for (int64_t t0 = 0; t0 < n_activation_rows; t0 += kMaxPass) {
            const int64_t n_t = std::min<int64_t>(kMaxPass, n_activation_rows - t0);
            const Activation* a[kMaxPass] = {};
            for (int64_t t = 0; t < n_t; ++t) {
                a[t] = reinterpret_cast<const Activation*>(a_base + static_cast<size_t>(t0 + t) *
                                                                        activation_row_bytes);
            }
            float res[kMaxPass][kGemvRows];
            kRuns[static_cast<size_t>(n_t - 1)](rows, weight_row_bytes, a, n_blocks, res);
            for (int64_t t = 0; t < n_t; ++t) {
                for (int64_t r = 0; r < kGemvRows; ++r) {
                    out[(t0 + t) * out_stride + first + r] = res[t][r];
                }
            }
        }
    }
}

// A GemmFn: 2 to kMaxRows activation rows (a decode step's drafted tokens, a
// small batch) run kFewRows, which reads the weights once for all of them;
// other counts, and matrices short of a whole row group, run kOther.
template <GemmFn kFewRows, GemmFn kOther, int64_t kMaxRows>
void few_rows_or(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                 const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                 int64_t n, float* out, int64_t out_stride) {
    const bool few =
        n_activation_rows >= 2 && n_activation_rows <= kMaxRows && n_weight_rows >= kGemvRows;
    (few ? kFewRows : kOther)(weights, weight_row_bytes, n_weight_rows, activations,
                              activation_row_bytes, n_activation_rows, n, out, out_stride);
}

}  // namespace ladder::kernels::cpu::detail
