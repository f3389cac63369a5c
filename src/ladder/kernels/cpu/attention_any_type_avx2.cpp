// The scores of attend_heads_any_type over a Q8_0 key cache with AVX2: eight
// keys at a time for each query head, the same int32 lanes, fma chain and
// lane tree as the Q8_0 x Q8_0 dot product of every path (vec_dot.h), so the
// bits are those of calling it once per key; its online softmax, eight
// library-exact expf at a time; and its weighted values over a Q8_0 value
// cache, each row decoded in registers. Runs only after CPUID said AVX2, FMA
// and F16C.
#include <immintrin.h>

#include <algorithm>
#include <iterator>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/kv_blocks_ahead.h"
#include "ladder/kernels/cpu/libm_expf_avx2.h"
#include "ladder/kernels/cpu/online_softmax_x86.h"
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

// The 8 values of a quarter of a Q8_0 block (qs: its 8 bytes) times the
// block's scale d: one rounding, as the decoders of every path make it.
LADDER_AVX2 inline __m256 decode_8(const int8_t* qs, __m256 d) {
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs)))),
                         d);
}

// weight_q8_0_values for kHeads heads: one pass over the positions per half
// Q8_0 block of the row (16 dimensions, two vectors per head in registers),
// so no decoded row is stored and each accumulator is one fma chain in
// position order. The block table is read once per cache block, not per row.
template <int kHeads>
LADDER_AVX2 void weight_heads(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                              int32_t first_visible, int32_t n_scores, const float* weights,
                              const float* rescales, float* out) {
    const int64_t row_bytes = kv.value_row_bytes();
    const int64_t block_stride = int64_t{kv.n_kv_heads} * kv.block_size * row_bytes;
    const auto* pool =
        static_cast<const uint8_t*>(kv.values) + int64_t{kv_head} * kv.block_size * row_bytes;
    constexpr int32_t kHalf = tensor::kQK / 2;
    const int32_t n_halves = kv.head_dim / kHalf;
    for (int32_t half = 0; half < n_halves; ++half) {
        const int64_t block_offset = half / 2 * int64_t{sizeof(BlockQ8_0)};
        const int32_t first_value = half % 2 * kHalf;
        __m256 acc[kHeads][2];
        for (auto& head : acc) head[0] = head[1] = _mm256_setzero_ps();
        // The first pass reads the rows from memory; the later ones find
        // them in L2.
        BlocksAhead ahead(kv, kv.values, row_bytes, block_table, kv_head, first_visible,
                          half == 0 ? n_scores : 0);
        int32_t i = 0;
        while (i < n_scores) {
            ahead.ask(i);
            const int32_t position = first_visible + i;
            const int32_t offset = position % kv.block_size;
            const int32_t n_rows = std::min(kv.block_size - offset, n_scores - i);
            const uint8_t* row = pool + block_table[position / kv.block_size] * block_stride +
                                 offset * row_bytes + block_offset;
            for (const int32_t end = i + n_rows; i < end; ++i, row += row_bytes) {
                const auto* block = reinterpret_cast<const BlockQ8_0*>(row);
                const __m256 d = _mm256_set1_ps(half_to_float(block->d));
                const auto* qs = reinterpret_cast<const int8_t*>(block->qs) + first_value;
                const __m256 lo = decode_8(qs, d);
                const __m256 hi = decode_8(qs + 8, d);
                for (int h = 0; h < kHeads; ++h) {
                    const float rescale = rescales[h * n_scores + i];
                    if (rescale != 1.0f) {
                        const __m256 r = _mm256_set1_ps(rescale);
                        acc[h][0] = _mm256_mul_ps(acc[h][0], r);
                        acc[h][1] = _mm256_mul_ps(acc[h][1], r);
                    }
                    const __m256 p = _mm256_set1_ps(weights[h * n_scores + i]);
                    acc[h][0] = _mm256_fmadd_ps(lo, p, acc[h][0]);
                    acc[h][1] = _mm256_fmadd_ps(hi, p, acc[h][1]);
                }
            }
        }
        for (int h = 0; h < kHeads; ++h) {
            float* head_out = out + h * kv.head_dim + half * kHalf;
            _mm256_storeu_ps(head_out, acc[h][0]);
            _mm256_storeu_ps(head_out + 8, acc[h][1]);
        }
    }
}

// weight_heads by its number of heads less one.
using WeightHeadsFn = void (*)(const PagedKvLayer&, const int32_t*, int32_t, int32_t, int32_t,
                               const float*, const float*, float*);
constexpr WeightHeadsFn kWeightHeads[] = {weight_heads<1>, weight_heads<2>, weight_heads<3>,
                                          weight_heads<4>};

}  // namespace

LADDER_AVX2 void weight_q8_0_values_avx2(const PagedKvLayer& kv, const int32_t* block_table,
                                         int32_t kv_head, int32_t first_visible, int32_t n_scores,
                                         const float* weights, const float* rescales,
                                         int32_t n_heads, float* out) {
    // Up to four heads at once: 8 accumulators, with the decoded vectors,
    // scale and probability, stay inside the 16 vector registers.
    constexpr auto kMaxHeads = static_cast<int32_t>(std::size(kWeightHeads));
    for (int32_t h0 = 0; h0 < n_heads; h0 += kMaxHeads) {
        const float* w = weights + int64_t{h0} * n_scores;
        const float* r = rescales + int64_t{h0} * n_scores;
        float* o = out + int64_t{h0} * kv.head_dim;
        kWeightHeads[std::min(kMaxHeads, n_heads - h0) - 1](kv, block_table, kv_head, first_visible,
                                                            n_scores, w, r, o);
    }
}

namespace {

struct LibmExpfAvx2 {
    LADDER_AVX2 static __m256 exp(__m256 x) { return libm_expf_avx2(x); }
};

}  // namespace

void online_softmax_avx2(float* scores, float* rescales, int32_t n, int32_t n_heads, float* sums) {
    online_softmax_x8<LibmExpfAvx2>(scores, rescales, n, n_heads, sums);
}

LADDER_AVX2 void score_q8_0_keys_avx2(const PagedKvLayer& kv, const int32_t* block_table,
                                      int32_t kv_head, int32_t first_visible, int32_t n_scores,
                                      const uint8_t* q_rows, int64_t q_row_stride, int32_t n_heads,
                                      float scale, float* scores) {
    const int32_t n_blocks = kv.head_dim / tensor::kQK;
    const int64_t key_bytes = kv.key_row_bytes();
    const __m256 scale8 = _mm256_set1_ps(scale);
    int32_t i = 0;
    BlocksAhead ahead(kv, kv.keys, key_bytes, block_table, kv_head, first_visible, n_scores);
    for (; i + 8 <= n_scores; i += 8) {
        ahead.ask(i);
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
            _mm256_storeu_ps(scores + static_cast<int64_t>(h) * n_scores + i, s);
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
        }
    }
}

}  // namespace ladder::kernels::cpu::detail
