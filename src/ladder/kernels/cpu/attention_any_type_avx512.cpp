// attend_heads_any_type's Q8_0 kernels with AVX-512: the scores of Q8_0 keys,
// two keys a vector, in the bits of the AVX2 scorer (and so of vec_dot); the
// weighted values of a Q8_0 value cache, each row's block decoded in
// registers (int8 to float, times its scale) and added into every head's
// accumulators, 16 dimensions a vector. Runs only after CPUID said AVX-512
// F/BW/VL/VNNI (and AVX2, FMA, F16C).
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ8_0;

// The 16 values of half a Q8_0 block (qs: its 16 bytes) times the block's scale d:
// one rounding, as the decoders of every path make it.
LADDER_AVX512 inline __m512 decode_16(const int8_t* qs, __m512 d) {
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)))),
                         d);
}

// weight_q8_0_values for kHeads heads: one pass over the positions per Q8_0
// block of the row (32 dimensions, two vectors per head in registers), so no
// decoded row is stored and each accumulator is one fma chain in position
// order. The block table is read once per cache block, not once per row.
template <int kHeads>
LADDER_AVX512 void weight_heads(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                                int32_t first_visible, int32_t n_scores, const float* probabilities,
                                int64_t probability_stride, float* out) {
    const int64_t row_bytes = kv.value_row_bytes();
    const int64_t block_stride = int64_t{kv.n_kv_heads} * kv.block_size * row_bytes;
    const auto* pool =
        static_cast<const uint8_t*>(kv.values) + int64_t{kv_head} * kv.block_size * row_bytes;
    const int32_t n_blocks = kv.head_dim / tensor::kQK;
    for (int32_t b = 0; b < n_blocks; ++b) {
        __m512 acc[kHeads][2];
        for (auto& head : acc) head[0] = head[1] = _mm512_setzero_ps();
        int32_t i = 0;
        while (i < n_scores) {
            const int32_t position = first_visible + i;
            const int32_t offset = position % kv.block_size;
            const int32_t n_rows = std::min(kv.block_size - offset, n_scores - i);
            const uint8_t* row = pool + block_table[position / kv.block_size] * block_stride +
                                 offset * row_bytes + b * int64_t{sizeof(BlockQ8_0)};
            for (const int32_t end = i + n_rows; i < end; ++i, row += row_bytes) {
                const auto* block = reinterpret_cast<const BlockQ8_0*>(row);
                const __m512 d = _mm512_set1_ps(half_to_float(block->d));
                const auto* qs = reinterpret_cast<const int8_t*>(block->qs);
                const __m512 lo = decode_16(qs, d);
                const __m512 hi = decode_16(qs + 16, d);
                for (int h = 0; h < kHeads; ++h) {
                    const __m512 p = _mm512_set1_ps(probabilities[h * probability_stride + i]);
                    acc[h][0] = _mm512_fmadd_ps(lo, p, acc[h][0]);
                    acc[h][1] = _mm512_fmadd_ps(hi, p, acc[h][1]);
                }
            }
        }
        for (int h = 0; h < kHeads; ++h) {
            float* head_out = out + h * kv.head_dim + b * tensor::kQK;
            _mm512_storeu_ps(head_out, acc[h][0]);
            _mm512_storeu_ps(head_out + 16, acc[h][1]);
        }
    }
}

// The int32 lanes of two keys' blocks a and b (the low and high half) against
// one query block held in both halves of q: lane j of a half is the sum of
// the four products of bytes 4j..4j+3, the integers the AVX2 scorer's
// maddubs and madd form (vpdpbusd adds the products without maddubs's int16
// step, which cannot saturate for Q8_0 values, so the sums are the same).
LADDER_AVX512 inline __m512i pair_lanes(const BlockQ8_0& a, const BlockQ8_0& b, __m512i q) {
    const __m512i x = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), 1);
    // |x| times q with x's sign is x * q; where x is 0 the sign does not matter.
    const __m512i q_signed =
        _mm512_mask_sub_epi8(q, _mm512_movepi8_mask(x), _mm512_setzero_si512(), q);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(x), q_signed);
}

// [a eight times | b eight times].
LADDER_AVX512 inline __m512 pair_of(float a, float b) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(a)),
                                               _mm256_castps_pd(_mm256_set1_ps(b)), 1));
}

// The int32 lanes of one key block against one query block, as above.
LADDER_AVX512 inline __m256i block_lanes(const BlockQ8_0& key, __m256i q) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key.qs));
    return dot_u8_s8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(q, x));
}

}  // namespace

LADDER_AVX512 void score_q8_0_keys_avx512(const PagedKvLayer& kv, const int32_t* block_table,
                                          int32_t kv_head, int32_t first_visible, int32_t n_scores,
                                          const uint8_t* q_rows, int64_t q_row_stride,
                                          int32_t n_heads, float scale, float* scores,
                                          float* max_scores) {
    const int32_t n_blocks = kv.head_dim / tensor::kQK;
    const int64_t key_bytes = kv.key_row_bytes();
    const __m256 scale8 = _mm256_set1_ps(scale);
    for (int32_t h = 0; h < n_heads; ++h) max_scores[h] = -std::numeric_limits<float>::infinity();
    int32_t i = 0;
    for (; i + 8 <= n_scores; i += 8) {
        const BlockQ8_0* keys[8];
        for (int k = 0; k < 8; ++k) {
            keys[k] = reinterpret_cast<const BlockQ8_0*>(
                kv.row(kv.keys, key_bytes, block_table, kv_head, first_visible + i + k));
        }
        // Each pair of keys' block scales, converted once for all the heads.
        __m512 key_scales[kMaxHeadDim / tensor::kQK][4];
        for (int32_t b = 0; b < n_blocks; ++b) {
            for (int j = 0; j < 4; ++j) {
                key_scales[b][j] =
                    pair_of(half_to_float(keys[2 * j][b].d), half_to_float(keys[2 * j + 1][b].d));
            }
        }
        for (int32_t h = 0; h < n_heads; ++h) {
            const auto* q = reinterpret_cast<const BlockQ8_0*>(q_rows + h * q_row_stride);
            __m512 acc[4];  // keys 2j (low half) and 2j + 1 (high half)
            for (auto& a : acc) a = _mm512_setzero_ps();
            for (int32_t b = 0; b < n_blocks; ++b) {
                const __m512i qv = _mm512_broadcast_i64x4(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[b].qs)));
                // The scalar key scale times the query's, one rounding as in the AVX2 scorer.
                const __m512 q_scale = _mm512_set1_ps(half_to_float(q[b].d));
                for (int j = 0; j < 4; ++j) {
                    acc[j] = _mm512_fmadd_ps(
                        _mm512_mul_ps(key_scales[b][j], q_scale),
                        _mm512_cvtepi32_ps(pair_lanes(keys[2 * j][b], keys[2 * j + 1][b], qv)),
                        acc[j]);
                }
            }
            __m256 per_key[8];
            for (int j = 0; j < 4; ++j) {
                per_key[2 * j] = _mm512_castps512_ps256(acc[j]);
                per_key[2 * j + 1] =
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[j]), 1));
            }
            const __m256 s = opaque(_mm256_mul_ps(sum_lanes_x8(per_key), scale8));
            float* head_scores = scores + static_cast<int64_t>(h) * n_scores + i;
            _mm256_storeu_ps(head_scores, s);
            for (int k = 0; k < 8; ++k) {
                max_scores[h] = max_scores[h] < head_scores[k] ? head_scores[k] : max_scores[h];
            }
        }
    }
    for (; i < n_scores; ++i) {
        const auto* key = reinterpret_cast<const BlockQ8_0*>(
            kv.row(kv.keys, key_bytes, block_table, kv_head, first_visible + i));
        for (int32_t h = 0; h < n_heads; ++h) {
            const auto* q = reinterpret_cast<const BlockQ8_0*>(q_rows + h * q_row_stride);
            __m256 acc = _mm256_setzero_ps();
            for (int32_t b = 0; b < n_blocks; ++b) {
                const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[b].qs));
                const float block_scale = half_to_float(key[b].d) * half_to_float(q[b].d);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(block_scale),
                                      _mm256_cvtepi32_ps(block_lanes(key[b], qv)), acc);
            }
            const float s = opaque(hsum(acc) * scale);
            scores[static_cast<int64_t>(h) * n_scores + i] = s;
            max_scores[h] = max_scores[h] < s ? s : max_scores[h];
        }
    }
}

LADDER_AVX512 void weight_q8_0_values_avx512(const PagedKvLayer& kv, const int32_t* block_table,
                                             int32_t kv_head, int32_t first_visible,
                                             int32_t n_scores, const float* probabilities,
                                             int32_t n_heads, float* out) {
    // Up to eight heads at once: 16 accumulators, with the decoded vectors,
    // scale and probability, stay inside the 32 vector registers.
    constexpr int32_t kMaxHeads = 8;
    for (int32_t h0 = 0; h0 < n_heads; h0 += kMaxHeads) {
        const float* p = probabilities + int64_t{h0} * n_scores;
        float* o = out + int64_t{h0} * kv.head_dim;
        switch (std::min(kMaxHeads, n_heads - h0)) {
            case 1:
                weight_heads<1>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            case 2:
                weight_heads<2>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            case 3:
                weight_heads<3>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            case 4:
                weight_heads<4>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            case 5:
                weight_heads<5>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            case 6:
                weight_heads<6>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            case 7:
                weight_heads<7>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
            default:
                weight_heads<8>(kv, block_table, kv_head, first_visible, n_scores, p, n_scores, o);
                break;
        }
    }
}

}  // namespace ladder::kernels::cpu::detail
