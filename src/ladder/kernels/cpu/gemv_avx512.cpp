// AVX-512 VNNI kernel for one activation row (decode) and Q4_1 weights. Decode
// streams every weight once, so this kernel only has to keep up with memory:
// the row-tile kernel spent ~8 cycles a block converting halves one by one and
// reached half the machine's read bandwidth. Here eight weight rows go
// together: one gather fetches their eight (d, m) heads of a block and one
// conversion turns them into floats, and each 512-bit vector carries two rows'
// integer sums, so the dot, the conversion and the fma serve two outputs.
//
// Results equal vec_dot_q4_1_q8_1 bit for bit (batch invariance): per output
// acc += (d_w * d_a) * lane sums by one fma per block in block order, offsets
// += m_w * s_a by one fma per block, result hsum(acc) + offsets. Lanes 0..7
// of a pair vector are the first row's vec_dot lanes in order, 8..15 the
// second row's; the heads vector holds row r's d_w in lane 2r and m_w in
// lane 2r + 1, so one multiply makes the scales and one fma runs the offsets.
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "ladder/kernels/cpu/gemv_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/util/check.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ4_1;
using tensor::BlockQ8_1;
using tensor::kQK;

constexpr int kRows = kGemvRows;  // weight rows per group: one gather of heads
constexpr int kPairs = kRows / 2;  // pair vectors, each its own fma chain

// Rows 2p and 2p + 1's codes of one block against the activation block laid
// out as [low half, high half] twice: [row low nibbles, row high nibbles,
// next row low, next row high], so lanes 0..7 are the first row's vec_dot
// lanes (elements 4k..4k + 3) and 8..15 the second's.
LADDER_AVX512 inline __m512i pair_codes(const BlockQ4_1& first, const BlockQ4_1& second) {
    __m512i z = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(first.qs)));
    z = _mm512_mask_broadcast_i32x4(z, 0xff00,
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(second.qs)));
    // Words of 128-bit lanes 1 and 3 take their high nibbles.
    z = _mm512_mask_srli_epi16(z, 0xff00ff00u, z, 4);
    return _mm512_and_si512(z, _mm512_set1_epi8(0x0f));
}

// (d_a, s_a) of an activation block as floats, repeated over the vector.
LADDER_AVX512 inline __m512 activation_scales(const BlockQ8_1& a) {
    uint32_t ds = 0;
    std::memcpy(&ds, &a.d, sizeof ds);  // d then s, two adjacent halves
    const __m128 pair = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(ds)));
    return _mm512_castpd_ps(_mm512_broadcastsd_pd(_mm_castps_pd(pair)));
}

// kRows weight rows starting at `rows` (row_bytes apart) against one activation row.
LADDER_AVX512 void group_dots(const char* rows, size_t row_bytes, const BlockQ8_1* a,
                              int64_t n_blocks, float res[kRows]) {
    const BlockQ4_1* w[kRows];
    for (int r = 0; r < kRows; ++r) {
        w[r] = reinterpret_cast<const BlockQ4_1*>(rows + static_cast<size_t>(r) * row_bytes);
    }
    const __m256i head_offsets =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                           _mm256_set1_epi32(static_cast<int>(row_bytes)));
    // Scale lanes for pair p: row 2p's d (lane 4p of the heads) then row 2p + 1's.
    __m512i scale_index[kPairs];
#pragma GCC unroll 4
    for (int p = 0; p < kPairs; ++p) {
        scale_index[p] = _mm512_mask_blend_epi32(0xff00, _mm512_set1_epi32(4 * p),
                                                 _mm512_set1_epi32(4 * p + 2));
    }
    __m512 acc[kPairs];
#pragma GCC unroll 4
    for (int p = 0; p < kPairs; ++p) acc[p] = _mm512_setzero_ps();
    __m512 offsets = _mm512_setzero_ps();  // lane 2r + 1: row r's offsets
    for (int64_t i = 0; i < n_blocks; ++i) {
        const __m256i heads = _mm256_i32gather_epi32(
            reinterpret_cast<const int*>(rows + static_cast<size_t>(i) * sizeof(BlockQ4_1)),
            head_offsets, 1);
        const __m512 dm = _mm512_cvtph_ps(heads);
        const __m512 ds = activation_scales(a[i]);
        const __m512 scales = _mm512_mul_ps(dm, ds);  // lane 2r: d_w * d_a of row r
        offsets = _mm512_fmadd_ps(dm, ds, offsets);
        const __m512i act = _mm512_broadcast_i64x4(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].qs)));
#pragma GCC unroll 4
        for (int p = 0; p < kPairs; ++p) {
            const __m512i sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                                     pair_codes(w[2 * p][i], w[2 * p + 1][i]), act);
            acc[p] = _mm512_fmadd_ps(_mm512_permutexvar_ps(scale_index[p], scales),
                                     _mm512_cvtepi32_ps(sums), acc[p]);
        }
    }
    alignas(64) float offset_lanes[16];
    _mm512_store_ps(offset_lanes, offsets);
#pragma GCC unroll 4
    for (int p = 0; p < kPairs; ++p) {
        res[2 * p] = hsum(_mm512_castps512_ps256(acc[p])) + offset_lanes[4 * p + 1];
        res[2 * p + 1] = hsum(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[p]), 1))) + offset_lanes[4 * p + 3];
    }
}

}  // namespace

void gemv_q4_1_q8_1(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activation, int64_t n, float* out) {
    const auto* base = static_cast<const char*>(weights);
    LADDER_CHECK(n_weight_rows >= kRows, "gemv needs a whole group of weight rows");
    const auto* a = static_cast<const BlockQ8_1*>(activation);
    const int64_t n_blocks = n / kQK;
    int64_t r0 = 0;
    for (; r0 + kRows <= n_weight_rows; r0 += kRows) {
        group_dots(base + static_cast<size_t>(r0) * weight_row_bytes, weight_row_bytes, a,
                   n_blocks, out + r0);
    }
    if (r0 == n_weight_rows) return;
    // A last group short of kGemvRows: the last kGemvRows rows again (some
    // computed twice, with identical results), so no read passes the matrix.
    const int64_t last = n_weight_rows - kRows;
    group_dots(base + static_cast<size_t>(last) * weight_row_bytes, weight_row_bytes, a, n_blocks,
               out + last);
}

}  // namespace ladder::kernels::cpu::detail
