// The scores of attend_heads_any_type over a Q8_0 key cache with AVX2: eight
// keys at a time for each query head, the same int32 lanes, fma chain and
// lane tree as the Q8_0 x Q8_0 dot product of every path (vec_dot.h), so the
// bits are those of calling it once per key. Runs only after CPUID said
// AVX2, FMA and F16C.
#include <immintrin.h>

#include <limits>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ8_0;

// The int32 lanes of one block's products, as vec_dot_q8_0_q8_0 forms them.
LADDER_AVX2 inline __m256i block_lanes(const BlockQ8_0& key, const __m256i q) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key.qs));
    return dot_u8_s8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(q, x));
}

}  // namespace

LADDER_AVX2 void score_q8_0_keys_avx2(const PagedKvLayer& kv, const int32_t* block_table,
                                      int32_t kv_head, int32_t first_visible, int32_t n_scores,
                                      const uint8_t* q_rows, int64_t q_row_stride, int32_t n_heads,
                                      float scale, float* scores, float* max_scores) {
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
        for (int32_t h = 0; h < n_heads; ++h) {
            const auto* q = reinterpret_cast<const BlockQ8_0*>(q_rows + h * q_row_stride);
            __m256 acc[8];
            for (auto& a : acc) a = _mm256_setzero_ps();
            for (int32_t b = 0; b < n_blocks; ++b) {
                const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[b].qs));
                const float q_scale = half_to_float(q[b].d);
                for (int k = 0; k < 8; ++k) {
                    const float block_scale = half_to_float(keys[k][b].d) * q_scale;
                    acc[k] =
                        _mm256_fmadd_ps(_mm256_set1_ps(block_scale),
                                        _mm256_cvtepi32_ps(block_lanes(keys[k][b], qv)), acc[k]);
                }
            }
            const __m256 s = opaque(_mm256_mul_ps(sum_lanes_x8(acc), scale8));
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

}  // namespace ladder::kernels::cpu::detail
