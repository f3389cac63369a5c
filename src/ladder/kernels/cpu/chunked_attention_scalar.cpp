// The reference of the chunked attention's F32 order, in portable C++: the
// avx2 path is tested against it bit for bit, the avx512-bf16 path within
// the BF16 rounding. Per chunk and row, in this order:
//   s[p] = dot8(q, k[p]) * scale          lanes d % 8, fma over d, hsum's tree
//   m    = max of s over the row's positions
//   e[p] = exp(max(s[p] - m, -87))        fast_exp; 0 at positions the row does not see
//   sum  = lanes p % 8 in position order, then hsum's tree
//   o[d] = fma chain over positions of e[p] * v[p][d]
// and the chunks merge in position order (merge_softmax below).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ladder/kernels/cpu/chunked_attention_isa.h"
#include "ladder/kernels/cpu/fast_exp.h"

namespace ladder::kernels::cpu::detail {

namespace {

// Below this, exp underflows to the edge of float's normal range: clamping
// keeps fast_exp on its polynomial, and the terms left are ~1e-38 of the
// chunk's largest.
constexpr float kMinExponent = -87.0f;

float tree8(const float lane[8]) {
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

float dot8(const float* a, const float* b, int32_t n) {
    float lane[8] = {};
    for (int32_t i = 0; i < n; i += 8) {
        for (int32_t j = 0; j < 8; ++j) lane[j] = std::fma(a[i + j], b[i + j], lane[j]);
    }
    return tree8(lane);
}

void load_queries(const AttentionTile& tile, int32_t head_dim, const ChunkScratch& scratch) {
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        const float* q = tile.q + (r / tile.n_heads) * tile.token_stride +
                         static_cast<int64_t>(r % tile.n_heads) * head_dim;
        std::memcpy(scratch.queries + static_cast<int64_t>(r) * head_dim, q,
                    sizeof(float) * static_cast<size_t>(head_dim));
    }
}

void attend_chunk(const AttentionTile& tile, const PagedKvLayer& kv, int32_t kv_head,
                  const int32_t* block_table, float scale, int32_t chunk,
                  const ChunkScratch& scratch) {
    const int32_t head_dim = kv.head_dim;
    const RowWindow window = tile_window(tile, chunk);
    // The chunk's rows in F32 (exact), position window.begin + j at row j.
    load_chunk_rows(Isa::Scalar, kv, kv_head, block_table, window, scratch);
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        const RowWindow row = row_window(tile, r, chunk);
        float* o = scratch.o + static_cast<int64_t>(r) * head_dim;
        scratch.sum[r] = 0.0f;
        scratch.max[r] = 0.0f;
        if (row.begin >= row.end) continue;
        const float* q = scratch.queries + static_cast<int64_t>(r) * head_dim;
        float* e = scratch.scores + static_cast<int64_t>(r) * kAttentionChunk;
        float max_score = -INFINITY;
        for (int32_t p = row.begin; p < row.end; ++p) {
            const int32_t j = p - window.begin;
            e[j] = dot8(q, scratch.keys + j * head_dim, head_dim) * scale;
            max_score = std::max(max_score, e[j]);
        }
        float lane[8] = {};
        for (int32_t p = row.begin; p < row.end; ++p) {
            const int32_t j = p - window.begin;
            e[j] = fast_exp(std::max(e[j] - max_score, kMinExponent));
            lane[p % 8] += e[j];
        }
        std::fill_n(o, head_dim, 0.0f);
        for (int32_t p = row.begin; p < row.end; ++p) {
            const int32_t j = p - window.begin;
            for (int32_t d = 0; d < head_dim; ++d) {
                o[d] = std::fma(e[j], scratch.values[j * head_dim + d], o[d]);
            }
        }
        scratch.max[r] = max_score;
        scratch.sum[r] = tree8(lane);
    }
}

void merge(int32_t n_rows, int32_t head_dim, const float* o, const float* max, const float* sum,
           const ChunkScratch& scratch) {
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
        const float old_weight = fast_exp(std::max(scratch.state_max[r] - new_max, kMinExponent));
        const float chunk_weight = fast_exp(std::max(max[r] - new_max, kMinExponent));
        scratch.state_sum[r] = std::fma(sum[r], chunk_weight, scratch.state_sum[r] * old_weight);
        for (int32_t d = 0; d < head_dim; ++d) {
            state_o[d] = std::fma(chunk_o[d], chunk_weight, state_o[d] * old_weight);
        }
        scratch.state_max[r] = new_max;
    }
}

void finish(const AttentionTile& tile, int32_t head_dim, const ChunkScratch& scratch) {
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        float* out = tile.out + (r / tile.n_heads) * tile.token_stride +
                     static_cast<int64_t>(r % tile.n_heads) * head_dim;
        const float* state_o = scratch.state_o + static_cast<int64_t>(r) * head_dim;
        const float sum = scratch.state_sum[r];
        const float inverse = sum == 0.0f ? 0.0f : 1.0f / sum;
        for (int32_t d = 0; d < head_dim; ++d) out[d] = sum == 0.0f ? 0.0f : state_o[d] * inverse;
    }
}

}  // namespace

const ChunkOps kScalarChunkOps{nullptr, load_queries, attend_chunk, merge, finish};

}  // namespace ladder::kernels::cpu::detail
