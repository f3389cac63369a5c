// AVX-512 VNNI multi-row kernels (GemmFn) of the types with decode and pair
// kernels: Q4_1 x Q8_1, Q8_0 and Q5_0 x Q8_0 (their vec_dots and row tiles
// from block_dots_avx512.cpp), Q4_K and Q6_K x Q8_K (the AVX2 vec_dots). The
// decode kernels (gemv_avx512.cpp) for one activation row and a few, the pair
// kernels (gemm_pairs_avx512.cpp, gemm_pairs_k_avx512.cpp) for more, row tiles
// for what neither takes. Each output repeats its vec_dot's accumulation
// exactly (gemm_tiles.h). The other types keep their block kernels' rows.
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "ladder/kernels/cpu/gemm_pairs_avx512.h"
#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/gemv.h"
#include "ladder/kernels/cpu/pair_panel_avx512.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu {

namespace {

// The K-quants have no AVX-512 row tile: few rows run the AVX2 table's
// multi-row kernel, which matches the AVX2 vec_dot this table keeps.
template <tensor::DType kType>
void avx2_gemm(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
               const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
               int64_t n, float* out, int64_t out_stride) {
    cpu_kernels_for(Isa::Avx2).gemm(kType)(weights, weight_row_bytes, n_weight_rows, activations,
                                           activation_row_bytes, n_activation_rows, n, out,
                                           out_stride);
}

// The pair kernels (kMany) pay a re-layout of the activations per call and
// hold at most kMaxPairWidth elements of a row; below kMinPairRows rows
// (T = 1 is decode) or past that width, kFew runs.
constexpr int64_t kMinPairRows = 2;

template <GemmFn kMany, GemmFn kFew>
void gemm_by_rows(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                  const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                  int64_t n, float* out, int64_t out_stride) {
    const bool many = n_activation_rows >= kMinPairRows && n <= detail::kMaxPairWidth;
    (many ? kMany : kFew)(weights, weight_row_bytes, n_weight_rows, activations,
                          activation_row_bytes, n_activation_rows, n, out, out_stride);
}

// Up to this many activation rows (a decode step's drafted tokens, a small
// batch) run the decode kernels' few-rows form, in passes of a few rows over
// each group's weights (in L1 by the second pass); the pair kernels' per-call
// set-up (a panel of 16 rows, every block's 16 scale products, per tile)
// costs more than it saves below that. SmolLM2's forward on 2 threads (Zen 4):
// T = 24 56 ms in pair panels against 49 in passes, T = 32 about the same;
// at 1 thread T = 16 55 ms against 57, T = 32 110 against 103 (pairs).
constexpr int64_t kMaxFewRows = 32;

// Past kMaxFewRows, the pair kernels take the rows in panels of 16, and a
// last panel of a few rows costs nearly a full one (a block's codes are
// unpacked and its 16 scale products formed whatever the panel holds):
// SmolLM2's forward at T = 17, when the pairs began past 16 rows, cost 8.6
// one-row steps against 6.6 at T = 16. So a remainder of up to kMaxTailRows
// rows runs kSelf on its own (few rows, or the decode kernel for one), over
// the tile's weights again from cache (remainders of 5 to 8 measured the
// same either way).
constexpr int64_t kMaxTailRows = 4;

template <GemmFn kSelf, GemmFn kPanels>
void panels_then_tail(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                      const void* activations, size_t activation_row_bytes,
                      int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    const int64_t tail = n_activation_rows % detail::kPanelRows;
    if (n_activation_rows <= kMaxFewRows || tail == 0 || tail > kMaxTailRows ||
        n_weight_rows < detail::kGemvRows || n > detail::kMaxPairWidth) {
        kSelf(weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
              n_activation_rows, n, out, out_stride);
        return;
    }
    const int64_t whole = n_activation_rows - tail;
    kPanels(weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes, whole, n,
            out, out_stride);
    kSelf(weights, weight_row_bytes, n_weight_rows,
          static_cast<const char*>(activations) + static_cast<size_t>(whole) * activation_row_bytes,
          activation_row_bytes, tail, n, out + whole * out_stride, out_stride);
}

// The legacy types' GemmFn: one row the decode kernel, 2 to kMaxFewRows the
// few-rows form, more the pair kernels with a short last panel split off.
template <GemmFn kFew, GemmFn kPairs, GemmFn kRowTiles, detail::GemvFn kGemv>
void legacy_rows(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                 const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                 int64_t n, float* out, int64_t out_stride) {
    using detail::few_rows_or;
    using detail::gemv_or;
    constexpr GemmFn kSelf =
        few_rows_or<kFew, gemm_by_rows<kPairs, gemv_or<kRowTiles, kGemv>>, kMaxFewRows>;
    panels_then_tail<kSelf, kPairs>(weights, weight_row_bytes, n_weight_rows, activations,
                                    activation_row_bytes, n_activation_rows, n, out, out_stride);
}

}  // namespace

namespace detail {

void install_avx512_gemm(CpuKernels& k) {
    using tensor::DType;
    k.gemm_by_weight[static_cast<int>(DType::Q4_1)] =
        legacy_rows<few_rows_q4_1_q8_1, gemm_pairs_q4_1_q8_1, row_tiles_q4_1_q8_1, gemv_q4_1_q8_1>;
    k.gemm_by_weight[static_cast<int>(DType::Q8_0)] =
        legacy_rows<few_rows_q8_0_q8_0, gemm_pairs_q8_0_q8_0, row_tiles_q8_0_q8_0, gemv_q8_0_q8_0>;
    k.gemm_by_weight[static_cast<int>(DType::Q5_0)] =
        legacy_rows<few_rows_q5_0_q8_0, gemm_pairs_q5_0_q8_0, row_tiles_q5_0_q8_0, gemv_q5_0_q8_0>;
    // No pair kernels yet: more rows than the few-rows form takes run the row tiles.
    k.gemm_by_weight[static_cast<int>(DType::Q4_0)] =
        few_rows_or<few_rows_q4_0_q8_0, gemv_or<row_tiles_q4_0_q8_0, gemv_q4_0_q8_0>, kMaxFewRows>;
    k.gemm_by_weight[static_cast<int>(DType::Q5_1)] =
        few_rows_or<few_rows_q5_1_q8_1, gemv_or<row_tiles_q5_1_q8_1, gemv_q5_1_q8_1>, kMaxFewRows>;
    k.gemm_by_weight[static_cast<int>(DType::Q4_K)] =
        gemm_by_rows<gemm_pairs_q4_k_q8_k, avx2_gemm<DType::Q4_K>>;
    k.gemm_by_weight[static_cast<int>(DType::Q6_K)] =
        gemm_by_rows<gemm_pairs_q6_k_q8_k, avx2_gemm<DType::Q6_K>>;
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
