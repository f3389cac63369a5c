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

// For the kRows query rows q[r] (rows of one token, so one window):
// scores[r][j] = dot8(q[r], key j) * scale for j in [first, end); max[r] is
// row r's largest. Each key vector is loaded once for every row (the chunk's
// keys outgrow L1, and a row at a time read them from L2 once per row, about
// one load per fma); each score's fma chain and lane sum are a single row's.
template <int kRows>
LADDER_AVX2 void score_rows(const float* const* q, const float* keys, int32_t first, int32_t end,
                            int32_t head_dim, float scale, float* const* scores, float* max) {
    const __m256 scale8 = _mm256_set1_ps(scale);
    __m256 max8[kRows];
    for (auto& m : max8) m = _mm256_set1_ps(-INFINITY);
    int32_t j = first;
    for (; j + 8 <= end; j += 8) {
        __m256 acc[kRows][8];
        // Four keys at a time: 4 x kRows accumulators, the rows' queries and
        // a key fit the 16 registers for up to three rows.
        for (int half = 0; half < 8; half += 4) {
            __m256 part[kRows][4];
            for (auto& row : part)
                for (auto& a : row) a = _mm256_setzero_ps();
            const float* key = keys + static_cast<int64_t>(j + half) * head_dim;
            for (int32_t d = 0; d < head_dim; d += 8) {
                for (int k = 0; k < 4; ++k) {
                    const __m256 key_d = _mm256_load_ps(key + k * head_dim + d);
                    for (int r = 0; r < kRows; ++r)
                        part[r][k] = _mm256_fmadd_ps(_mm256_load_ps(q[r] + d), key_d, part[r][k]);
                }
            }
            for (int r = 0; r < kRows; ++r)
                for (int k = 0; k < 4; ++k) acc[r][half + k] = part[r][k];
        }
        for (int r = 0; r < kRows; ++r) {
            const __m256 s = opaque(_mm256_mul_ps(sum_lanes_x8(acc[r]), scale8));
            _mm256_storeu_ps(scores[r] + j, s);
            max8[r] = _mm256_max_ps(s, max8[r]);
        }
    }
    for (int r = 0; r < kRows; ++r) {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, max8[r]);
        max[r] = -INFINITY;
        for (const float m : lanes) max[r] = max[r] < m ? m : max[r];
    }
    for (; j < end; ++j) {
        for (int r = 0; r < kRows; ++r) {
            __m256 acc = _mm256_setzero_ps();
            for (int32_t d = 0; d < head_dim; d += 8) {
                acc = _mm256_fmadd_ps(_mm256_load_ps(q[r] + d),
                                      _mm256_load_ps(keys + j * head_dim + d), acc);
            }
            scores[r][j] = opaque(hsum(acc) * scale);
            max[r] = max[r] < scores[r][j] ? scores[r][j] : max[r];
        }
    }
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

// For the kRows rows' weights e[r]: o[r][d] = fma chain over j in [first,
// end) of e[r][j] * values[j][d], 32 dimensions (four vectors) at a time, so
// that each value vector is loaded once for every row.
template <int kRows>
LADDER_AVX2 void weight_values(const float* const* e, const float* values, int32_t first,
                               int32_t end, int32_t head_dim, float* const* o) {
    for (int32_t d0 = 0; d0 < head_dim; d0 += 32) {
        const int n_vectors = std::min<int32_t>(4, (head_dim - d0) / 8);
        __m256 acc[kRows][4];
        for (auto& row : acc)
            for (auto& a : row) a = _mm256_setzero_ps();
        for (int32_t j = first; j < end; ++j) {
            __m256 p[kRows];
            for (int r = 0; r < kRows; ++r) p[r] = _mm256_set1_ps(e[r][j]);
            const float* v = values + j * head_dim + d0;
            for (int i = 0; i < n_vectors; ++i) {
                const __m256 value = _mm256_load_ps(v + 8 * i);
                for (int r = 0; r < kRows; ++r) acc[r][i] = _mm256_fmadd_ps(p[r], value, acc[r][i]);
            }
        }
        for (int r = 0; r < kRows; ++r)
            for (int i = 0; i < n_vectors; ++i) _mm256_storeu_ps(o[r] + d0 + 8 * i, acc[r][i]);
    }
}

// Rows r0 .. r0 + kRows of the tile, which share `row` (one token's heads):
// their scores, softmax sums and weighted values for this chunk.
template <int kRows>
LADDER_AVX2 void attend_rows(int32_t head_dim, RowWindow window, RowWindow row, int32_t r0,
                             float scale, const ChunkScratch& scratch) {
    const int32_t first = row.begin - window.begin;
    const int32_t end = row.end - window.begin;
    const float* q[kRows];
    float* e[kRows];
    float* o[kRows];
    float max[kRows];
    for (int r = 0; r < kRows; ++r) {
        q[r] = scratch.queries + static_cast<int64_t>(r0 + r) * head_dim;
        e[r] = scratch.scores + static_cast<int64_t>(r0 + r) * kAttentionChunk;
        o[r] = scratch.o + static_cast<int64_t>(r0 + r) * head_dim;
    }
    score_rows<kRows>(q, scratch.keys, first, end, head_dim, scale, e, max);
    for (int r = 0; r < kRows; ++r) {
        scratch.sum[r0 + r] = exp_and_sum(e[r], window.begin, first, end, max[r]);
        scratch.max[r0 + r] = max[r];
    }
    weight_values<kRows>(e, scratch.values, first, end, head_dim, o);
}

LADDER_AVX2 void attend_chunk(const AttentionTile& tile, const PagedKvLayer& kv, int32_t kv_head,
                              const int32_t* block_table, float scale, int32_t chunk,
                              const ChunkScratch& scratch) {
    const int32_t head_dim = kv.head_dim;
    const RowWindow window = tile_window(tile, chunk);
    if (window.begin < window.end)
        load_chunk_rows(Isa::Avx2, kv, kv_head, block_table, window, scratch);
    // A token's heads see the same positions: up to three of them at a time.
    for (int32_t r = 0; r < tile.n_rows();) {
        const RowWindow row = row_window(tile, r, chunk);
        const int32_t token_end = (r / tile.n_heads + 1) * tile.n_heads;
        const int32_t n = std::min(3, token_end - r);
        if (row.begin >= row.end) {
            for (int32_t k = r; k < r + n; ++k) {
                scratch.sum[k] = 0.0f;
                scratch.max[k] = 0.0f;
            }
        } else if (n == 3) {
            attend_rows<3>(head_dim, window, row, r, scale, scratch);
        } else if (n == 2) {
            attend_rows<2>(head_dim, window, row, r, scale, scratch);
        } else {
            attend_rows<1>(head_dim, window, row, r, scale, scratch);
        }
        r += n;
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
