// AVX-512 VNNI kernels for one activation row (decode): Q4_0, Q4_1, Q5_0,
// Q5_1 and Q8_0 weights. Decode streams every weight once, so these only have to keep up
// with memory: the row-tile kernels spent ~8 cycles a block converting halves
// one by one and reached half the machine's read bandwidth. Here eight weight
// rows go together: eight loads fetch their eight block heads and one
// conversion turns them into floats, and each 512-bit vector carries two
// rows' integer sums, so the dot, the conversion and the fma serve two outputs.
//
// Results equal the table's vec_dot bit for bit (batch invariance): per output
// acc += (d_w * d_a) * lane sums by one fma per block in block order (Q4_1
// also offsets += m_w * s_a by one fma per block), result hsum(acc) (+
// offsets). Lanes 0..7 of a pair vector are the first row's vec_dot lanes in
// order (lane k: elements 4k..4k + 3), 8..15 the second row's.
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "ladder/kernels/cpu/gemv.h"

#include <immintrin.h>

#include <algorithm>
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

constexpr int kRows = kGemvRows;   // weight rows per group: one vector of heads
constexpr int kPairs = kRows / 2;  // pair vectors, each its own fma chain

LADDER_AVX512 inline __m128i load_16(const void* p) {
    return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

LADDER_AVX512 inline __m256i load_32(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// One activation block as vpdpbusd meets it, shared by every weight row: its
// 32 codes twice over and the int32 lanes each pair's sums start from.
struct ActivationCodes {
    __m512i codes;
    __m512i start;
};

LADDER_AVX512 inline __m512i twice(const int8_t* qs) { return _mm512_broadcast_i64x4(load_32(qs)); }

// -(each lane's 4-byte sum of u * y): the start that cancels an unsigned bias
// u added to the weight codes.
LADDER_AVX512 inline __m512i negated_sums(__m512i u, __m512i y) {
    return _mm512_sub_epi32(_mm512_setzero_si512(),
                            _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y));
}

// Two rows' 16 bytes of nibbles (low nibbles are elements 0..15, high ones
// 16..31) as [row low, row high, next row low, next row high]: each row's 32
// codes in element order.
LADDER_AVX512 inline __m512i pair_nibbles(const uint8_t* first, const uint8_t* second) {
    __m512i z = _mm512_broadcast_i32x4(load_16(first));
    z = _mm512_mask_broadcast_i32x4(z, 0xff00, load_16(second));
    z = _mm512_mask_srli_epi16(z, 0xff00ff00u, z, 4);  // 128-bit lanes 1 and 3: high nibbles
    return _mm512_and_si512(z, _mm512_set1_epi8(0x0f));
}

// The low halves of eight head dwords as floats in lanes 0..7.
LADDER_AVX512 inline __m512 low_halves(__m256i words) {
    return _mm512_castps256_ps512(_mm256_cvtph_ps(_mm256_cvtepi32_epi16(words)));
}

// Q4_1 x Q8_1, as the Q4_1 block kernel. The heads (d | m << 16) convert
// to row r's d_w in lane 2r and m_w in lane 2r + 1 and the activation's (d_a,
// s_a) repeat over the vector, so one multiply makes the scales (even lanes)
// and one fma runs the offsets (odd lanes).
struct Q4_1Rows {
    using Block = BlockQ4_1;
    using Activation = BlockQ8_1;
    static constexpr bool kOffsets = true;
    static constexpr int kScaleStride = 2;  // lanes between two rows' scales

    LADDER_AVX512 static __m512 heads(__m256i words) { return _mm512_cvtph_ps(words); }

    LADDER_AVX512 static __m512 activation_scales(const Activation& a) {
        uint32_t ds = 0;
        std::memcpy(&ds, &a.d, sizeof ds);  // d then s, two adjacent halves
        const __m128 pair = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(ds)));
        return _mm512_castpd_ps(_mm512_broadcastsd_pd(_mm_castps_pd(pair)));
    }

    LADDER_AVX512 static ActivationCodes activation_codes(const Activation& a) {
        return {twice(a.qs), _mm512_setzero_si512()};
    }

    // Two rows' codes as vpdpbusd's unsigned operand, formed once per block
    // and met by every activation row.
    LADDER_AVX512 static __m512i pair_codes(const Block& first, const Block& second) {
        return pair_nibbles(first.qs, second.qs);
    }
};

// Weights whose block starts with its half d_w and meets Q8_0 activations
// (one scale per block, no offsets): the heads' low halves are the
// d_w, row r in lane r.
struct ScaleOnlyRows {
    using Activation = BlockQ8_0;
    static constexpr bool kOffsets = false;
    static constexpr int kScaleStride = 1;

    LADDER_AVX512 static __m512 heads(__m256i words) { return low_halves(words); }

    LADDER_AVX512 static __m512 activation_scales(const Activation& a) {
        return _mm512_set1_ps(half_to_float(a.d));
    }
};

// Q8_0 x Q8_0, as the Q8_0 block kernel. vpdpbusd wants one unsigned side: the
// weights go in as x + 128 and the sums start from -128 * sum(y), the same
// integers as sum(x * y), with the start shared by every row.
struct Q8_0Rows : ScaleOnlyRows {
    using Block = BlockQ8_0;

    LADDER_AVX512 static ActivationCodes activation_codes(const Activation& a) {
        const __m512i y = twice(a.qs);
        return {y, negated_sums(_mm512_set1_epi8(static_cast<char>(0x80)), y)};
    }

    LADDER_AVX512 static __m512i pair_codes(const Block& first, const Block& second) {
        const __m512i x =
            _mm512_inserti64x4(_mm512_castsi256_si512(load_32(first.qs)), load_32(second.qs), 1);
        return _mm512_xor_si512(x, _mm512_set1_epi8(static_cast<char>(0x80)));
    }
};

// Two rows' five-bit codes (Q5_0, Q5_1) as vpdpbusd's unsigned operand:
// element e's fifth bit is bit e of qh, so the pair's 64 codes take the first
// row's 32 bits, then the second's.
template <typename Block>
LADDER_AVX512 inline __m512i pair_five_bit_codes(const Block& first, const Block& second) {
    uint32_t qh_first = 0;
    uint32_t qh_second = 0;
    std::memcpy(&qh_first, first.qh, sizeof qh_first);
    std::memcpy(&qh_second, second.qh, sizeof qh_second);
    const __mmask64 high = _cvtu64_mask64(qh_first | (uint64_t{qh_second} << 32));
    const __m512i nibbles = pair_nibbles(first.qs, second.qs);
    return _mm512_mask_add_epi8(nibbles, high, nibbles, _mm512_set1_epi8(16));
}

// Q5_1 x Q8_1, as Q4_1 with the fifth bit: the block starts with (d, m) too.
struct Q5_1Rows : Q4_1Rows {
    using Block = BlockQ5_1;

    LADDER_AVX512 static __m512i pair_codes(const Block& first, const Block& second) {
        return pair_five_bit_codes(first, second);
    }
};

// Q4_0 and Q5_0 x Q8_0, as their block kernels, which sum (q - kOffset) * y:
// here q (unsigned) * y from a start of -kOffset * sum(y), the same integers,
// with the start shared by every row.
template <int kOffset>
struct CenteredRows : ScaleOnlyRows {
    LADDER_AVX512 static ActivationCodes activation_codes(const Activation& a) {
        const __m512i y = twice(a.qs);
        return {y, negated_sums(_mm512_set1_epi8(kOffset), y)};
    }
};

struct Q4_0Rows : CenteredRows<8> {
    using Block = BlockQ4_0;

    LADDER_AVX512 static __m512i pair_codes(const Block& first, const Block& second) {
        return pair_nibbles(first.qs, second.qs);
    }
};

struct Q5_0Rows : CenteredRows<16> {
    using Block = BlockQ5_0;

    LADDER_AVX512 static __m512i pair_codes(const Block& first, const Block& second) {
        return pair_five_bit_codes(first, second);
    }
};

// kRows weight rows starting at `rows` (row_bytes apart) against kT
// activation rows a[0..kT): res[t][r]. The weight rows' heads and codes are
// formed once per block and met by each activation row in turn; every output
// keeps its own accumulator with the operations, in the order, of kT = 1
// (the table's vec_dot), so a few rows (verifying drafted tokens) read the
// weights once and give each row's decode bits.
template <typename Weights, int kT>
struct GroupDots {
    LADDER_AVX512 static void run(const char* rows, size_t row_bytes,
                                  const typename Weights::Activation* const* a, int64_t n_blocks,
                                  float (*res)[kRows]) {
        using Block = typename Weights::Block;
        // Pair p's scale vector: row 2p's scale in lanes 0..7, row 2p + 1's in 8..15.
        constexpr int kStride = Weights::kScaleStride;
        __m512i scale_index[kPairs];
#pragma GCC unroll 4
        for (int p = 0; p < kPairs; ++p) {
            scale_index[p] = _mm512_mask_blend_epi32(0xff00, _mm512_set1_epi32(2 * p * kStride),
                                                     _mm512_set1_epi32((2 * p + 1) * kStride));
        }
        __m512 acc[kT][kPairs];
        __m512 offsets[kT];  // Q4_1, lane 2r + 1: row r's offsets
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
            offsets[t] = _mm512_setzero_ps();
#pragma GCC unroll 4
            for (int p = 0; p < kPairs; ++p) acc[t][p] = _mm512_setzero_ps();
        }
        for (int64_t i = 0; i < n_blocks; ++i) {
            prefetch_group_ahead<Block>(rows, row_bytes, i);
            const char* blocks = rows + static_cast<size_t>(i) * sizeof(Block);
            const __m512 heads = Weights::heads(group_heads(blocks, row_bytes));
            __m512 scales[kT];
            ActivationCodes act[kT];
#pragma GCC unroll 4
            for (int t = 0; t < kT; ++t) {
                const __m512 activation_scales = Weights::activation_scales(a[t][i]);
                scales[t] = _mm512_mul_ps(heads, activation_scales);
                if constexpr (Weights::kOffsets) {
                    offsets[t] = _mm512_fmadd_ps(heads, activation_scales, offsets[t]);
                }
                act[t] = Weights::activation_codes(a[t][i]);
            }
#pragma GCC unroll 4
            for (int p = 0; p < kPairs; ++p) {
                const __m512i codes =
                    Weights::pair_codes(row_block<Block>(blocks, row_bytes, 2 * p),
                                        row_block<Block>(blocks, row_bytes, 2 * p + 1));
#pragma GCC unroll 4
                for (int t = 0; t < kT; ++t) {
                    const __m512i sums = _mm512_dpbusd_epi32(act[t].start, codes, act[t].codes);
                    acc[t][p] = _mm512_fmadd_ps(_mm512_permutexvar_ps(scale_index[p], scales[t]),
                                                _mm512_cvtepi32_ps(sums), acc[t][p]);
                }
            }
        }
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
            alignas(64) float offset_lanes[16];
            _mm512_store_ps(offset_lanes, offsets[t]);
#pragma GCC unroll 4
            for (int p = 0; p < kPairs; ++p) {
                const __m256 second =
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[t][p]), 1));
                res[t][2 * p] = hsum(_mm512_castps512_ps256(acc[t][p]));
                res[t][2 * p + 1] = hsum(second);
                if constexpr (Weights::kOffsets) {
                    res[t][2 * p] += offset_lanes[4 * p + 1];
                    res[t][2 * p + 1] += offset_lanes[4 * p + 3];
                }
            }
        }
    }
};

// The few-rows form (gemv.h) runs four activation rows a pass: what the 32
// registers hold.
constexpr int kMaxPass = 4;

}  // namespace

void gemv_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out) {
    for_each_row_group<Q4_1Rows::Activation, group_dots_one<GroupDots, Q4_1Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out) {
    for_each_row_group<Q8_0Rows::Activation, group_dots_one<GroupDots, Q8_0Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out) {
    for_each_row_group<Q5_0Rows::Activation, group_dots_one<GroupDots, Q5_0Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q4_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out) {
    for_each_row_group<Q4_0Rows::Activation, group_dots_one<GroupDots, Q4_0Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void gemv_q5_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out) {
    for_each_row_group<Q5_1Rows::Activation, group_dots_one<GroupDots, Q5_1Rows>>(
        weights, weight_row_bytes, n_weight_rows, activation, n, out);
}

void few_rows_q4_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q4_0Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q5_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q5_1Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q4_1Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q8_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q8_0Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

void few_rows_q5_0_q8_0(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    few_rows_in_passes<GroupDots, Q5_0Rows, kMaxPass>(weights, weight_row_bytes, n_weight_rows,
                                                      activations, activation_row_bytes,
                                                      n_activation_rows, n, out, out_stride);
}

}  // namespace ladder::kernels::cpu::detail
