// AVX2 multi-row kernels (GemmFn) for the dtypes of vec_dot_avx2.cpp: Q4_K
// and Q6_K x Q8_K, and F16. Each output repeats that file's accumulation
// exactly (gemm_tiles.h says why that is enough). The avx512 table keeps the
// K-quant ones, as it keeps their vec_dots. The other types' multi-row kernels
// come from their block kernels (block_kernels_x86.h).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/gemv.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::BlockQ4_K;
using tensor::BlockQ6_K;
using tensor::BlockQ8_K;
using tensor::kQKK;

// Tile shape: kWK x kT accumulators; a K-quant tile keeps kT integer sums
// live across a super-block besides them, so one weight row.
constexpr int kT = 4;
constexpr int kWK = 1;

LADDER_AVX2 inline __m256i load_32(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// The kRows activation rows' float d of block i in lanes 0..kRows - 1.
template <int kRows>
LADDER_AVX2 inline __m128 q8_k_scales(const BlockQ8_K* const* a, int64_t i) {
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma GCC unroll 4
    for (int t = 0; t < kRows; ++t) d[t] = a[t][i].d;
    return _mm_setr_ps(d[0], d[1], d[2], d[3]);
}

// Per output, as vec_dot_q4_k_q8_k: per super-block the int32 lane sums of
// scale_j * maddubs(q, y) (exact, so their add order is free), acc += (d_a *
// d_w) * sums by one fma; four min lanes (lane k: sub-blocks 2k and 2k + 1)
// += -(d_a * dmin_w) * lane by one fma; result hsum(acc) + ((m0 + m2) + (m1 + m3)).
template <int kRowsW, int kRows>
struct Q4_KTile {
    LADDER_AVX2 static void run(const BlockQ4_K* const* w, const BlockQ8_K* const* a,
                                int64_t n_blocks, float (*res)[kT]) {
        static_assert(kRows <= 4, "four rows' mins fill one vector");
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        __m256 acc[kRowsW][kRows];
        __m128 acc_mins[kRowsW][kRows];
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) {
                acc[j][t] = _mm256_setzero_ps();
                acc_mins[j][t] = _mm_setzero_ps();
            }
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
            const __m128 d_a = q8_k_scales<kRows>(a, i);
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
                const BlockQ4_K& b = w[j][i];
                uint8_t scales[8];
                uint8_t mins[8];
                unpack_q4_k_scales(b.scales, scales, mins);
                // Min lane k = min_2k * (bsums[4k] + bsums[4k + 1]) + min_2k+1 * (bsums[4k + 2]
                // + bsums[4k + 3]): the bsum pairs of sub-block j, weighted by min_j.
                uint64_t mins_bits = 0;
                std::memcpy(&mins_bits, mins, sizeof mins_bits);
                const __m128i mins16 =
                    _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(mins_bits)));
                __m128i min_lanes[kRows];
                __m256i sums[kRows];
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) {
                    const __m256i bsums = load_32(a[t][i].bsums);
                    const __m128i pair_sums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums),
                                                             _mm256_extracti128_si256(bsums, 1));
                    min_lanes[t] = _mm_madd_epi16(mins16, pair_sums);
                    sums[t] = _mm256_setzero_si256();
                }
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles), 2c + 1
                    const __m256i packed = load_32(b.qs + 32 * c);
                    const __m256i q_lo = _mm256_and_si256(packed, low4);
                    const __m256i q_hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
                    const __m256i scale_lo = _mm256_set1_epi16(scales[2 * c]);
                    const __m256i scale_hi = _mm256_set1_epi16(scales[2 * c + 1]);
#pragma GCC unroll 8
                    for (int t = 0; t < kRows; ++t) {
                        const int8_t* y = a[t][i].qs + 64 * c;
                        const __m256i p_lo = _mm256_maddubs_epi16(q_lo, load_32(y));
                        const __m256i p_hi = _mm256_maddubs_epi16(q_hi, load_32(y + 32));
                        sums[t] = _mm256_add_epi32(sums[t], _mm256_madd_epi16(p_lo, scale_lo));
                        sums[t] =
                            opaque(_mm256_add_epi32(sums[t], _mm256_madd_epi16(p_hi, scale_hi)));
                    }
                }
                alignas(16) float d[4];
                _mm_store_ps(d, _mm_mul_ps(d_a, _mm_set1_ps(half_to_float(b.d))));
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) {
                    acc[j][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&d[t]),
                                                _mm256_cvtepi32_ps(sums[t]), acc[j][t]);
                }
                alignas(16) float neg_dmin[4];
                const __m128 dmin = _mm_mul_ps(d_a, _mm_set1_ps(half_to_float(b.dmin)));
                _mm_store_ps(neg_dmin, _mm_xor_ps(dmin, _mm_set1_ps(-0.0f)));
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) {
                    acc_mins[j][t] = _mm_fmadd_ps(_mm_set1_ps(neg_dmin[t]),
                                                  _mm_cvtepi32_ps(min_lanes[t]), acc_mins[j][t]);
                }
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) {
                const __m128 mins = acc_mins[j][t];
                __m128 m = _mm_add_ps(mins, _mm_movehl_ps(mins, mins));
                m = _mm_add_ss(m, _mm_movehdup_ps(m));
                res[j][t] = hsum(acc[j][t]) + _mm_cvtss_f32(m);
            }
        }
    }
};

// Per output, as vec_dot_q6_k_q8_k: per super-block the int32 lane sums of
// group scale * maddubs(q, y), minus 32 * scale * bsum of groups 2k and 2k + 1
// in lane k (all exact integers), acc += (d_a * d_w) * sums by one fma; result
// hsum(acc).
template <int kRowsW, int kRows>
struct Q6_KTile {
    LADDER_AVX2 static void run(const BlockQ6_K* const* w, const BlockQ8_K* const* a,
                                int64_t n_blocks, float (*res)[kT]) {
        static_assert(kRows <= 4, "four rows' scales fill one vector");
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        const __m256i bits45 = _mm256_set1_epi8(0x30);
        __m256 acc[kRowsW][kRows];
#pragma GCC unroll 8
        for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
            for (int t = 0; t < kRows; ++t) acc[j][t] = _mm256_setzero_ps();
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
            const __m128 d_a = q8_k_scales<kRows>(a, i);
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
                const BlockQ6_K& b = w[j][i];
                const int8_t* sc = b.scales;
                const __m256i sc16 =
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
                __m256i sums[kRows];
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) sums[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
                for (int half = 0; half < 2; ++half) {  // 128 elements each
                    const uint8_t* ql = b.ql + 64 * half;
                    const __m256i ql0 = load_32(ql);
                    const __m256i ql1 = load_32(ql + 32);
                    const __m256i qh = load_32(b.qh + 32 * half);
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
#pragma GCC unroll 4
                    for (int k = 0; k < 4; ++k) {
                        const int g = 8 * half + 2 * k;  // groups g (first 16 bytes) and g + 1
                        const __m256i group_scales =
                            _mm256_set_m128i(_mm_set1_epi16(sc[g + 1]), _mm_set1_epi16(sc[g]));
#pragma GCC unroll 8
                        for (int t = 0; t < kRows; ++t) {
                            const __m256i pairs = _mm256_maddubs_epi16(
                                q[k], load_32(a[t][i].qs + 128 * half + 32 * k));
                            sums[t] = opaque(
                                _mm256_add_epi32(sums[t], _mm256_madd_epi16(pairs, group_scales)));
                        }
                    }
                }
                alignas(16) float d[4];
                _mm_store_ps(d, _mm_mul_ps(d_a, _mm_set1_ps(half_to_float(b.d))));
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) {
                    const __m256i bias =
                        _mm256_slli_epi32(_mm256_madd_epi16(load_32(a[t][i].bsums), sc16), 5);
                    acc[j][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&d[t]),
                                                _mm256_cvtepi32_ps(_mm256_sub_epi32(sums[t], bias)),
                                                acc[j][t]);
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

void gemm_q4_k_q8_k(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                    int64_t n, float* out, int64_t out_stride) {
    static constexpr auto kTiles = detail::make_tile_table<BlockQ4_K, BlockQ8_K, kWK, kT, Q4_KTile>(
        std::make_index_sequence<kT>{});
    detail::run_tiles<BlockQ4_K, BlockQ8_K, kWK, kT>(
        kTiles, kQKK, weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

void gemm_q6_k_q8_k(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                    int64_t n, float* out, int64_t out_stride) {
    static constexpr auto kTiles = detail::make_tile_table<BlockQ6_K, BlockQ8_K, kWK, kT, Q6_KTile>(
        std::make_index_sequence<kT>{});
    detail::run_tiles<BlockQ6_K, BlockQ8_K, kWK, kT>(
        kTiles, kQKK, weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, n, out, out_stride);
}

// F16 x F16, as vec_dot_f16_f16: per output 8 lanes of fmas over elements
// 8k + lane, in order, then hsum. A tile converts each weight chunk once for
// all its activation rows and runs one fma chain per output. The activation
// rows are converted to float once per call: a half is exact in float, so
// every product is the vec_dot's.
struct HalfChunk {
    uint16_t h[8];
};

struct FloatChunk {
    float f[8];
};

template <int kTableRows>
struct F16Tiles {
    template <int kRowsW, int kRows>
    struct Tile {
        LADDER_AVX2 static void run(const HalfChunk* const* w, const FloatChunk* const* a,
                                    int64_t n_chunks, float (*res)[kTableRows]) {
            __m256 acc[kRowsW][kRows];
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) acc[j][t] = _mm256_setzero_ps();
            }
            for (int64_t i = 0; i < n_chunks; ++i) {
#pragma GCC unroll 8
                for (int j = 0; j < kRowsW; ++j) {
                    const __m256 x = _mm256_cvtph_ps(
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[j][i].h)));
#pragma GCC unroll 8
                    for (int t = 0; t < kRows; ++t) {
                        acc[j][t] = _mm256_fmadd_ps(x, _mm256_loadu_ps(a[t][i].f), acc[j][t]);
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
};

// Up to kFewF16Rows activation rows (a verification step's drafted tokens, a
// small batch), a tile takes one weight row, so the matrix is read front to
// back as the prefetcher likes it: two rows side by side, each a stream of a
// few cache lines, made T = 2 cost 1.5x T = 1 (SmolLM2 F16, 2 threads).
// More rows take several weight rows a tile, so each activation chunk
// loaded serves all of them (prefill).
constexpr int kFewF16Rows = 8;
constexpr int kWManyF16 = 3;
constexpr int kTManyF16 = 4;

// The first n halves of each activation row as floats, rows n apart, in a
// buffer of the calling thread's that grows to the largest call it has seen.
LADDER_AVX2 const float* activations_as_floats(const void* activations, size_t activation_row_bytes,
                                               int64_t n_activation_rows, int64_t n) {
    thread_local std::vector<float> floats;
    floats.resize(static_cast<size_t>(n_activation_rows * n));
    for (int64_t t = 0; t < n_activation_rows; ++t) {
        const auto* row = reinterpret_cast<const uint16_t*>(static_cast<const char*>(activations) +
                                                            t * activation_row_bytes);
        float* out = floats.data() + t * n;
        for (int64_t i = 0; i < n; i += 8) {
            _mm256_storeu_ps(
                out + i,
                _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
        }
    }
    return floats.data();
}

// One activation row, and rows whose length is not a whole number of chunks
// (vec_dot's scalar tail), go one vec_dot per output: for T = 1 its single
// stream per row beat four interleaved ones (SmolLM2 F16, 1 thread: 18 ms
// vs 28); from T = 2 the tiles win.
void gemm_f16_f16(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                  const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                  int64_t n, float* out, int64_t out_stride) {
    if (n_activation_rows == 1 || n % 8 != 0) {
        detail::vec_dot_per_output<Isa::Avx2, tensor::DType::F16>(
            weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
            n_activation_rows, n, out, out_stride);
        return;
    }
    const float* floats =
        activations_as_floats(activations, activation_row_bytes, n_activation_rows, n);
    const size_t float_row_bytes = static_cast<size_t>(n) * sizeof(float);
    if (n_activation_rows <= kFewF16Rows) {
        static constexpr auto kTiles =
            detail::make_tile_table<HalfChunk, FloatChunk, 1, kFewF16Rows,
                                    F16Tiles<kFewF16Rows>::Tile>(
                std::make_index_sequence<kFewF16Rows>{});
        detail::run_tiles<HalfChunk, FloatChunk, 1, kFewF16Rows>(
            kTiles, 8, weights, weight_row_bytes, n_weight_rows, floats, float_row_bytes,
            n_activation_rows, n, out, out_stride);
        return;
    }
    static constexpr auto kTiles =
        detail::make_tile_table<HalfChunk, FloatChunk, kWManyF16, kTManyF16,
                                F16Tiles<kTManyF16>::Tile>(std::make_index_sequence<kTManyF16>{});
    detail::run_tiles<HalfChunk, FloatChunk, kWManyF16, kTManyF16>(
        kTiles, 8, weights, weight_row_bytes, n_weight_rows, floats, float_row_bytes,
        n_activation_rows, n, out, out_stride);
}

}  // namespace

namespace detail {

void install_avx2_gemm(CpuKernels& k) {
    using tensor::DType;
    k.gemm_by_weight[static_cast<int>(DType::Q4_K)] = gemm_q4_k_q8_k;
    k.gemm_by_weight[static_cast<int>(DType::Q6_K)] = gemm_q6_k_q8_k;
    k.gemm_by_weight[static_cast<int>(DType::F16)] = gemm_f16_f16;
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
