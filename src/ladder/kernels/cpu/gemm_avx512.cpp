// AVX-512 VNNI multi-row kernels (GemmFn): Q4_1 x Q8_1 and Q8_0 x Q8_0, whose
// vec_dots are in vec_dot_avx512.cpp, and Q5_0 x Q8_0, Q4_K and Q6_K x Q8_K
// (the AVX2 vec_dots). Row tiles here for few activation rows, pair kernels
// (gemm_pairs_avx512.cpp, gemm_pairs_k_avx512.cpp) for more. Each output
// repeats its vec_dot's accumulation exactly (gemm_tiles.h).
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
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::BlockQ4_1;
using tensor::BlockQ8_0;
using tensor::BlockQ8_1;
using tensor::kQK;

// Tile shape: kW x kT accumulators in registers. 4 x 4 fits the 32 registers
// and was as fast at T = 64, but 2.5x slower than vec_dot at T = 1 on a 28 MB
// Q8_0 matrix (docs/performance.md, "Batched matmul").
constexpr int kW = 2;
constexpr int kT = 4;

LADDER_AVX512 inline __m256i load_32(const int8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline uint32_t load_u32(const void* p) {
    uint32_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Per output (weight row j, activation row t), as vec_dot_q4_1_q8_1: acc +=
// (d_w * d_a) * int32 lane sums by one fma per block; offsets += m_w * s_a by
// one scalar fma per block (the compiler contracts vec_dot's `+= a * b`);
// result hsum(acc) + offsets. The scale products and the offset fmas of
// kT rows run lane-wise in one vector: lane 2t holds row t's d, 2t + 1 its s.
template <int kRowsW, int kRows>
struct Q4_1Tile {
    LADDER_AVX512 static void run(const BlockQ4_1* const* w, const BlockQ8_1* const* a,
                                  int64_t n_blocks, float (*res)[kT]) {
        static_assert(kRows <= 4, "four (d, s) pairs fill one vector");
        __m256 acc[kRowsW][kRows];
        __m256 offsets[kRowsW];  // lane 2t + 1: row t's offsets; even lanes unused
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
            offsets[j] = _mm256_setzero_ps();
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) acc[j][t] = _mm256_setzero_ps();
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
            uint32_t ds_bits[4] = {0, 0, 0, 0};
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) ds_bits[t] = load_u32(&a[t][i].d);
            const __m256 ds = _mm256_cvtph_ps(
                _mm_setr_epi32(static_cast<int>(ds_bits[0]), static_cast<int>(ds_bits[1]),
                               static_cast<int>(ds_bits[2]), static_cast<int>(ds_bits[3])));
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
                const BlockQ4_1& b = w[j][i];
                alignas(32) float scale[8];
                _mm256_store_ps(scale, _mm256_mul_ps(_mm256_set1_ps(half_to_float(b.d)), ds));
                offsets[j] = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(b.m)), ds, offsets[j]);
                const __m256i q = unpack_nibbles_16(b.qs);
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) {
                    const __m256i sums =
                        _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, load_32(a[t][i].qs));
                    acc[j][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scale[2 * t]),
                                                _mm256_cvtepi32_ps(sums), acc[j][t]);
                }
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
            alignas(32) float off[8];
            _mm256_store_ps(off, offsets[j]);
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) res[j][t] = hsum(acc[j][t]) + off[2 * t + 1];
        }
    }
};

// Per output, as vec_dot_q8_0_q8_0: acc += (d_w * d_a) * int32 lane sums of
// x * y by one fma per block; result hsum(acc). The lane sums are exact
// either way, so they are formed here with one vpdpbusd per output instead of
// two sign flips: (y + 128) * x summed from a start of -128 * sum(x), where
// y + 128 is shared by the weight rows and -128 * sum(x) by the activation rows.
template <int kRowsW, int kRows>
struct Q8_0Tile {
    LADDER_AVX512 static void run(const BlockQ8_0* const* w, const BlockQ8_0* const* a,
                                  int64_t n_blocks, float (*res)[kT]) {
        static_assert(kRows <= 8, "eight scales fill one vector");
        const __m256i bias_byte = _mm256_set1_epi8(static_cast<char>(0x80));
        __m256 acc[kRowsW][kRows];
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) acc[j][t] = _mm256_setzero_ps();
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
            uint16_t d_bits[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) d_bits[t] = a[t][i].d;
            const __m256 d_a = _mm256_cvtph_ps(
                _mm_setr_epi16(static_cast<short>(d_bits[0]), static_cast<short>(d_bits[1]),
                               static_cast<short>(d_bits[2]), static_cast<short>(d_bits[3]),
                               static_cast<short>(d_bits[4]), static_cast<short>(d_bits[5]),
                               static_cast<short>(d_bits[6]), static_cast<short>(d_bits[7])));
            __m256i y_biased[kRows];
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) {
                y_biased[t] = _mm256_xor_si256(load_32(a[t][i].qs), bias_byte);
            }
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
                const BlockQ8_0& b = w[j][i];
                alignas(32) float scale[8];
                _mm256_store_ps(scale, _mm256_mul_ps(_mm256_set1_ps(half_to_float(b.d)), d_a));
                const __m256i x = load_32(b.qs);
                const __m256i start =
                    _mm256_sub_epi32(_mm256_setzero_si256(),
                                     _mm256_dpbusd_epi32(_mm256_setzero_si256(), bias_byte, x));
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) {
                    const __m256i sums = _mm256_dpbusd_epi32(start, y_biased[t], x);
                    acc[j][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scale[t]),
                                                _mm256_cvtepi32_ps(sums), acc[j][t]);
                }
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) res[j][t] = hsum(acc[j][t]);
        }
    }
};

void row_tiles_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    static constexpr auto kTiles = detail::make_tile_table<BlockQ4_1, BlockQ8_1, kW, kT, Q4_1Tile>(
        std::make_index_sequence<kT>{});
    detail::run_tiles<BlockQ4_1, BlockQ8_1, kW, kT>(
        kTiles, kQK, weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

void row_tiles_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activations, size_t activation_row_bytes,
                         int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    static constexpr auto kTiles = detail::make_tile_table<BlockQ8_0, BlockQ8_0, kW, kT, Q8_0Tile>(
        std::make_index_sequence<kT>{});
    detail::run_tiles<BlockQ8_0, BlockQ8_0, kW, kT>(
        kTiles, kQK, weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

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
// batch) run the decode kernels' few-rows form, which reads the weights once
// for all of them; the pair kernels' per-call set-up (a panel of 16 rows,
// every block's 16 scale products) costs more than it saves below that
// (SmolLM2 forward, 1 thread: T = 12 41 ms vs 48, T = 16 55 vs 57, T = 32 110
// vs 103).
constexpr int64_t kMaxFewRows = 16;

template <GemmFn kFewRows, GemmFn kOther>
void few_rows_or(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                 const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                 int64_t n, float* out, int64_t out_stride) {
    const bool few = n_activation_rows >= 2 && n_activation_rows <= kMaxFewRows &&
                     n_weight_rows >= detail::kGemvRows;
    (few ? kFewRows : kOther)(weights, weight_row_bytes, n_weight_rows, activations,
                              activation_row_bytes, n_activation_rows, n, out, out_stride);
}

}  // namespace

namespace detail {

void install_avx512_gemm(CpuKernels& k) {
    using tensor::DType;
    k.gemm_by_weight[static_cast<int>(DType::Q4_1)] =
        few_rows_or<few_rows_q4_1_q8_1, gemm_by_rows<gemm_pairs_q4_1_q8_1,
                                                     gemv_or<row_tiles_q4_1_q8_1, gemv_q4_1_q8_1>>>;
    k.gemm_by_weight[static_cast<int>(DType::Q8_0)] =
        few_rows_or<few_rows_q8_0_q8_0, gemm_by_rows<gemm_pairs_q8_0_q8_0,
                                                     gemv_or<row_tiles_q8_0_q8_0, gemv_q8_0_q8_0>>>;
    k.gemm_by_weight[static_cast<int>(DType::Q5_0)] = few_rows_or<
        few_rows_q5_0_q8_0,
        gemm_by_rows<gemm_pairs_q5_0_q8_0,
                     gemv_or<vec_dot_per_output<Isa::Avx512, DType::Q5_0>, gemv_q5_0_q8_0>>>;
    k.gemm_by_weight[static_cast<int>(DType::Q4_K)] =
        gemm_by_rows<gemm_pairs_q4_k_q8_k, avx2_gemm<DType::Q4_K>>;
    k.gemm_by_weight[static_cast<int>(DType::Q6_K)] =
        gemm_by_rows<gemm_pairs_q6_k_q8_k, avx2_gemm<DType::Q6_K>>;
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
