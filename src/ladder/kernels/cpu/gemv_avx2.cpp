// AVX2 kernels for one activation row (decode): Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 weights,
// for CPUs without AVX-512. As in gemv_avx512.cpp, eight weight rows go
// together: their block heads are read into one vector (eight dword loads,
// not a gather: AVX2 gathers are microcoded on AMD cores, and the loads made
// SmolLM2's Q4_1 decode matrices 1.2 to 1.3x faster on one) and one
// conversion turns them into floats, where the row-tile kernels converted each half alone;
// the integer sums stay one row per 256-bit vector, as the vec_dots form them.
//
// Results equal the AVX2 table's vec_dot bit for bit: per output acc += (d_w *
// d_a) * lane sums by one fma per block in block order (Q4_1 also offsets +=
// m_w * s_a by one fma per block), result hsum(acc) (+ offsets); the lane sums
// are the same integers however they are formed.
#include "ladder/kernels/cpu/gemv.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ4_0;
using tensor::BlockQ4_1;
using tensor::BlockQ5_0;
using tensor::BlockQ5_1;
using tensor::BlockQ8_0;
using tensor::BlockQ8_1;
using tensor::kQK;

constexpr int kRows = kGemvRows;

LADDER_AVX2 inline __m256i load_32(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// The low halves of eight head dwords as eight floats, in row order.
LADDER_AVX2 inline __m256 low_halves(__m256i words) {
    const __m256i packed = _mm256_packus_epi32(
        _mm256_and_si256(words, _mm256_set1_epi32(0xffff)), _mm256_setzero_si256());
    // packus works per 128-bit lane: rows 0..3 are qword 0, rows 4..7 qword 2.
    return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
}

// One activation block, shared by the group's eight rows.
struct ActivationBlock {
    __m256i codes;
    __m256i correction;  // Q4_0, Q5_0: 8 or 16 * the lane sums of y, subtracted per row
};

// Q4_1 x Q8_1. The heads (d | m << 16) convert to (d_w, m_w) pairs,
// rows 0..3 in one vector and 4..7 in the other; the activation's (d_a, s_a)
// repeat over a vector, so one multiply makes the scales (even lanes) and one
// fma runs the offsets (odd lanes).
struct Q4_1Rows {
    using Block = BlockQ4_1;
    using Activation = BlockQ8_1;
    static constexpr bool kOffsets = true;

    LADDER_AVX2 static void heads(__m256i words, __m256 out[2]) {
        out[0] = _mm256_cvtph_ps(_mm256_castsi256_si128(words));
        out[1] = _mm256_cvtph_ps(_mm256_extracti128_si256(words, 1));
    }

    LADDER_AVX2 static __m256 activation_scales(const Activation& a) {
        uint32_t ds = 0;
        std::memcpy(&ds, &a.d, sizeof ds);  // d then s, two adjacent halves
        const __m128 pair = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(ds)));
        return _mm256_castpd_ps(_mm256_broadcastsd_pd(_mm_castps_pd(pair)));
    }

    LADDER_AVX2 static ActivationBlock activation(const Activation& a) {
        return {load_32(a.qs), _mm256_setzero_si256()};
    }

    LADDER_AVX2 static __m256i lane_sums(const Block& b, const ActivationBlock& act) {
        return dot_u8_s8(unpack_nibbles_16(b.qs), act.codes);
    }
};

// Weights whose block starts with its half d_w and meet Q8_0 activations:
// one scale per block, no offsets.
struct ScaleOnlyRows {
    using Activation = BlockQ8_0;
    static constexpr bool kOffsets = false;

    LADDER_AVX2 static void heads(__m256i words, __m256 out[2]) {
        out[0] = low_halves(words);
    }

    LADDER_AVX2 static __m256 activation_scales(const Activation& a) {
        return _mm256_set1_ps(half_to_float(a.d));
    }
};

// Q8_0 x Q8_0: x's sign moves onto y, as the Q8_0 block kernel does.
struct Q8_0Rows : ScaleOnlyRows {
    using Block = BlockQ8_0;

    LADDER_AVX2 static ActivationBlock activation(const Activation& a) {
        return {load_32(a.qs), _mm256_setzero_si256()};
    }

    LADDER_AVX2 static __m256i lane_sums(const Block& b, const ActivationBlock& act) {
        const __m256i x = load_32(b.qs);
        return dot_u8_s8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(act.codes, x));
    }
};

// Q5_1 x Q8_1, as Q4_1 with the fifth bit: the block starts with (d, m) too.
struct Q5_1Rows : Q4_1Rows {
    using Block = BlockQ5_1;

    LADDER_AVX2 static __m256i lane_sums(const Block& b, const ActivationBlock& act) {
        const __m256i q = _mm256_or_si256(unpack_nibbles_16(b.qs), expand_high_bits(b.qh));
        return dot_u8_s8(q, act.codes);
    }
};

// Q4_0 and Q5_0 x Q8_0: sums of (q - kOffset) * y as sums of q * y less
// kOffset * sums of y, the second shared by the group's rows.
template <int kOffset>
struct CenteredRows : ScaleOnlyRows {
    LADDER_AVX2 static ActivationBlock activation(const Activation& a) {
        const __m256i y = load_32(a.qs);
        return {y, dot_u8_s8(_mm256_set1_epi8(kOffset), y)};
    }
};

struct Q4_0Rows : CenteredRows<8> {
    using Block = BlockQ4_0;

    LADDER_AVX2 static __m256i lane_sums(const Block& b, const ActivationBlock& act) {
        return _mm256_sub_epi32(dot_u8_s8(unpack_nibbles_16(b.qs), act.codes), act.correction);
    }
};

struct Q5_0Rows : CenteredRows<16> {
    using Block = BlockQ5_0;

    LADDER_AVX2 static __m256i lane_sums(const Block& b, const ActivationBlock& act) {
        const __m256i q = _mm256_or_si256(unpack_nibbles_16(b.qs), expand_high_bits(b.qh));
        return _mm256_sub_epi32(dot_u8_s8(q, act.codes), act.correction);
    }
};

// kRows weight rows starting at `rows` (row_bytes apart) against kT
// activation rows a[0..kT): res[t][r]. The group's heads are read once
// per block and each weight block meets every activation row in turn; every
// output keeps its own accumulator with the operations, in the order, of
// kT = 1 (the table's vec_dot), so a few rows (verifying drafted tokens)
// read the weights once and give each row's decode bits.
template <typename Weights, int kT>
struct GroupDots {
    LADDER_AVX2 static void run(const char* rows, size_t row_bytes,
                                const typename Weights::Activation* const* a, int64_t n_blocks,
                                float (*res)[kRows]) {
        using Block = typename Weights::Block;
        // Row r's scale: lane 2r of the two (d, m) vectors for Q4_1, lane r else.
        constexpr int kStride = Weights::kOffsets ? 2 : 1;
        __m256 acc[kT][kRows];
        __m256 offsets[kT][2];
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
            for (auto& v : acc[t]) v = _mm256_setzero_ps();
            offsets[t][0] = _mm256_setzero_ps();
            offsets[t][1] = _mm256_setzero_ps();
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
            prefetch_group_ahead<Block>(rows, row_bytes, i);
            __m256 heads[2];
            const char* blocks = rows + static_cast<size_t>(i) * sizeof(Block);
            Weights::heads(group_heads(blocks, row_bytes), heads);
            // Read back by broadcast loads: one load per row, no shuffle.
            alignas(32) float scales[kT][16];
            ActivationBlock act[kT];
#pragma GCC unroll 4
            for (int t = 0; t < kT; ++t) {
                const __m256 activation_scales = Weights::activation_scales(a[t][i]);
                _mm256_store_ps(scales[t], _mm256_mul_ps(heads[0], activation_scales));
                if constexpr (Weights::kOffsets) {
                    _mm256_store_ps(scales[t] + 8, _mm256_mul_ps(heads[1], activation_scales));
                    offsets[t][0] = _mm256_fmadd_ps(heads[0], activation_scales, offsets[t][0]);
                    offsets[t][1] = _mm256_fmadd_ps(heads[1], activation_scales, offsets[t][1]);
                }
                act[t] = Weights::activation(a[t][i]);
            }
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
                for (int t = 0; t < kT; ++t) {
                    const __m256i sums =
                        Weights::lane_sums(row_block<Block>(blocks, row_bytes, r), act[t]);
                    acc[t][r] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scales[t][kStride * r]),
                                                _mm256_cvtepi32_ps(sums), acc[t][r]);
                }
            }
        }
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
            alignas(32) float offset_lanes[16];
            _mm256_store_ps(offset_lanes, offsets[t][0]);
            _mm256_store_ps(offset_lanes + 8, offsets[t][1]);
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r) {
                res[t][r] = hsum(acc[t][r]);
                if constexpr (Weights::kOffsets) res[t][r] += offset_lanes[2 * r + 1];
            }
        }
    }
};

// The few-rows form (gemv.h) runs four activation rows a pass. Their 32
// accumulators outnumber the 16 registers, yet spilling beat passes of two
// or three (SmolLM2 Q4_1, 2 threads: T = 3 to 4 about 15% faster than with
// two), since every pass reads the weights again.
constexpr int kMaxPass = 4;

}  // namespace

void gemv_q4_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out) {
    for_each_row_group<Q4_1Rows::Activation, group_dots_one<GroupDots, Q4_1Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q8_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out) {
    for_each_row_group<Q8_0Rows::Activation, group_dots_one<GroupDots, Q8_0Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q4_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out) {
    for_each_row_group<Q4_0Rows::Activation, group_dots_one<GroupDots, Q4_0Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q5_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out) {
    for_each_row_group<Q5_1Rows::Activation, group_dots_one<GroupDots, Q5_1Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q5_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                         const void* activation, int64_t n, float* out) {
    for_each_row_group<Q5_0Rows::Activation, group_dots_one<GroupDots, Q5_0Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void few_rows_q4_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q4_1Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q8_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q8_0Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q4_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q4_0Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q5_1_q8_1_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q5_1Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q5_0_q8_0_avx2(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                             const void* activations, size_t activation_row_bytes,
                             int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q5_0Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

}  // namespace ladder::kernels::cpu::detail
