// The chunked attention's F32 order (chunked_attention_scalar.cpp) with AVX2 +
// FMA + F16C, bit for bit: each score is the reference's 8-lane dot, each
// output dimension the reference's fma chain over positions, only eight at a
// time. What CPUs without AVX512-BF16 run. Runs only after CPUID said AVX2,
// FMA and F16C.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ladder/kernels/cpu/chunked_attention_isa.h"
#include "ladder/kernels/cpu/fast_exp.h"
#include "ladder/kernels/cpu/fast_exp_avx2.h"
#include "ladder/kernels/cpu/simd_x86.h"

namespace ladder::kernels::cpu::detail {

namespace {

constexpr float kMinExponent = -87.0f;  // as the reference clamps

LADDER_AVX2 void load_queries(const AttentionTile& tile, int32_t head_dim,
                              const ChunkScratch& scratch) {
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        const float* q = tile.q + (r / tile.n_heads) * tile.token_stride +
                         static_cast<int64_t>(r % tile.n_heads) * head_dim;
        std::memcpy(scratch.queries + static_cast<int64_t>(r) * head_dim, q,
                    sizeof(float) * static_cast<size_t>(head_dim));
    }
}

// scores[j] = dot8(q, key j) * scale for j in [first, end); returns their max.
LADDER_AVX2 float score_row(const float* q, const float* keys, int32_t first, int32_t end,
                            int32_t head_dim, float scale, float* scores) {
    const __m256 scale8 = _mm256_set1_ps(scale);
    __m256 max8 = _mm256_set1_ps(-INFINITY);
    int32_t j = first;
    for (; j + 8 <= end; j += 8) {
        __m256 acc[8];
        for (auto& a : acc) a = _mm256_setzero_ps();
        for (int32_t d = 0; d < head_dim; d += 8) {
            const __m256 qd = _mm256_load_ps(q + d);
            for (int k = 0; k < 8; ++k) {
                acc[k] = _mm256_fmadd_ps(qd, _mm256_load_ps(keys + (j + k) * head_dim + d), acc[k]);
            }
        }
        const __m256 s = opaque(_mm256_mul_ps(sum_lanes_x8(acc), scale8));
        _mm256_storeu_ps(scores + j, s);
        max8 = _mm256_max_ps(s, max8);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, max8);
    float max_score = -INFINITY;
    for (const float m : lanes) max_score = max_score < m ? m : max_score;
    for (; j < end; ++j) {
        __m256 acc = _mm256_setzero_ps();
        for (int32_t d = 0; d < head_dim; d += 8) {
            acc = _mm256_fmadd_ps(_mm256_load_ps(q + d), _mm256_load_ps(keys + j * head_dim + d), acc);
        }
        scores[j] = opaque(hsum(acc) * scale);
        max_score = max_score < scores[j] ? scores[j] : max_score;
    }
    return max_score;
}

// e[j] = exp(max(s[j] - m, -87)) over [first, end) (j = position - window
// begin), summed in lanes by position % 8 as the reference sums them.
LADDER_AVX2 float exp_and_sum(float* e, int32_t window_begin, int32_t first, int32_t end,
                              float max_score) {
    const __m256 max8 = _mm256_set1_ps(max_score);
    const __m256 floor8 = _mm256_set1_ps(kMinExponent);
    __m256 lanes = _mm256_setzero_ps();
    // Groups of 8 positions aligned to position 0, so lane k holds position % 8 == k.
    const int32_t first_position = window_begin + first;
    const int32_t end_position = window_begin + end;
    for (int32_t group = first_position - first_position % 8; group < end_position; group += 8) {
        const int32_t begin = group - window_begin;  // index of the group's lane 0
        if (group >= first_position && group + 8 <= end_position) {
            const __m256 x = opaque(_mm256_sub_ps(_mm256_loadu_ps(e + begin), max8));
            const __m256 v = fast_exp_avx2(_mm256_max_ps(x, floor8));
            _mm256_storeu_ps(e + begin, v);
            lanes = _mm256_add_ps(lanes, v);
            continue;
        }
        alignas(32) float lane[8] = {};
        for (int k = 0; k < 8; ++k) {
            if (group + k >= first_position && group + k < end_position) lane[k] = e[begin + k];
        }
        const __m256 x = opaque(_mm256_sub_ps(_mm256_load_ps(lane), max8));
        alignas(32) float v[8];
        _mm256_store_ps(v, fast_exp_avx2(_mm256_max_ps(x, floor8)));
        for (int k = 0; k < 8; ++k) {
            if (group + k >= first_position && group + k < end_position) {
                e[begin + k] = v[k];
            } else {
                v[k] = 0.0f;
            }
        }
        lanes = _mm256_add_ps(lanes, _mm256_load_ps(v));
    }
    return hsum(lanes);
}

// o[d] = fma chain over j in [first, end) of e[j] * values[j][d], 64
// dimensions (eight vectors) at a time.
LADDER_AVX2 void weight_values(const float* e, const float* values, int32_t first, int32_t end,
                               int32_t head_dim, float* o) {
    for (int32_t d0 = 0; d0 < head_dim; d0 += 64) {
        const int n_vectors = std::min<int32_t>(8, (head_dim - d0) / 8);
        __m256 acc[8];
        for (auto& a : acc) a = _mm256_setzero_ps();
        for (int32_t j = first; j < end; ++j) {
            const __m256 p = _mm256_set1_ps(e[j]);
            const float* v = values + j * head_dim + d0;
            for (int i = 0; i < n_vectors; ++i) {
                acc[i] = _mm256_fmadd_ps(p, _mm256_load_ps(v + 8 * i), acc[i]);
            }
        }
        for (int i = 0; i < n_vectors; ++i) _mm256_storeu_ps(o + d0 + 8 * i, acc[i]);
    }
}

LADDER_AVX2 void attend_chunk(const AttentionTile& tile, const PagedKvLayer& kv, int32_t kv_head,
                              const int32_t* block_table, float scale, int32_t chunk,
                              const ChunkScratch& scratch) {
    const int32_t head_dim = kv.head_dim;
    const RowWindow window = tile_window(tile, chunk);
    if (window.begin < window.end)
        load_chunk_rows(Isa::Avx2, kv, kv_head, block_table, window, scratch);
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        const RowWindow row = row_window(tile, r, chunk);
        scratch.sum[r] = 0.0f;
        scratch.max[r] = 0.0f;
        if (row.begin >= row.end) continue;
        const int32_t first = row.begin - window.begin;
        const int32_t end = row.end - window.begin;
        float* e = scratch.scores + static_cast<int64_t>(r) * kAttentionChunk;
        const float max_score =
            score_row(scratch.queries + static_cast<int64_t>(r) * head_dim, scratch.keys, first,
                      end, head_dim, scale, e);
        scratch.sum[r] = exp_and_sum(e, window.begin, first, end, max_score);
        scratch.max[r] = max_score;
        weight_values(e, scratch.values, first, end, head_dim,
                      scratch.o + static_cast<int64_t>(r) * head_dim);
    }
}

}  // namespace

LADDER_AVX2 void merge_avx2(int32_t n_rows, int32_t head_dim, const float* o, const float* max,
                       const float* sum, const ChunkScratch& scratch) {
    for (int32_t r = 0; r < n_rows; ++r) {
        if (sum[r] == 0.0f) continue;
        const float* chunk_o = o + static_cast<int64_t>(r) * head_dim;
        float* state_o = scratch.state_o + static_cast<int64_t>(r) * head_dim;
        if (scratch.state_sum[r] == 0.0f) {
            std::memcpy(state_o, chunk_o, sizeof(float) * static_cast<size_t>(head_dim));
            scratch.state_max[r] = max[r];
            scratch.state_sum[r] = sum[r];
            continue;
        }
        const float new_max = std::max(scratch.state_max[r], max[r]);
        const float old_weight =
            fast_exp(std::max(opaque(scratch.state_max[r] - new_max), kMinExponent));
        const float chunk_weight = fast_exp(std::max(opaque(max[r] - new_max), kMinExponent));
        scratch.state_sum[r] =
            std::fma(sum[r], chunk_weight, opaque(scratch.state_sum[r] * old_weight));
        const __m256 a = _mm256_set1_ps(old_weight);
        const __m256 b = _mm256_set1_ps(chunk_weight);
        for (int32_t d = 0; d < head_dim; d += 8) {
            const __m256 scaled = opaque(_mm256_mul_ps(_mm256_loadu_ps(state_o + d), a));
            _mm256_storeu_ps(state_o + d, _mm256_fmadd_ps(_mm256_loadu_ps(chunk_o + d), b, scaled));
        }
        scratch.state_max[r] = new_max;
    }
}

LADDER_AVX2 void finish_avx2(const AttentionTile& tile, int32_t head_dim, const ChunkScratch& scratch) {
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        float* out = tile.out + (r / tile.n_heads) * tile.token_stride +
                     static_cast<int64_t>(r % tile.n_heads) * head_dim;
        const float sum = scratch.state_sum[r];
        if (sum == 0.0f) {
            std::fill_n(out, head_dim, 0.0f);
            continue;
        }
        const __m256 inverse = _mm256_set1_ps(1.0f / sum);
        const float* state_o = scratch.state_o + static_cast<int64_t>(r) * head_dim;
        for (int32_t d = 0; d < head_dim; d += 8) {
            _mm256_storeu_ps(out + d, _mm256_mul_ps(_mm256_loadu_ps(state_o + d), inverse));
        }
    }
}

const ChunkOps kAvx2ChunkOps{nullptr, load_queries, attend_chunk, merge_avx2, finish_avx2};

}  // namespace ladder::kernels::cpu::detail
