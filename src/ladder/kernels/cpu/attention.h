// Attention of one query head over a sequence's paged F16 K/V. One row of
// scores at a time (never a T x T matrix), with the roundings llama.cpp's CPU
// path makes, because greedy outputs must agree with it token for token.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/cpu_features.h"

namespace ladder::kernels::cpu {

// One layer's K or V pool: [n_blocks][n_kv_heads][block_size][head_dim] F16.
struct PagedKvLayer {
    const uint16_t* keys = nullptr;
    const uint16_t* values = nullptr;
    int32_t n_kv_heads = 0;
    int32_t block_size = 0;
    int32_t head_dim = 0;
};

constexpr int32_t kMaxHeadDim = 512;

// out[head_dim] = softmax(q . K[p] * scale for p in [first_visible, n_visible)) . V
// block_table lists the sequence's blocks in position order; scores is scratch
// for n_visible - first_visible floats.
//
// Numerics follow llama.cpp (ggml) on x86: q is rounded to F16 before the dot
// with the F16 keys, the softmax sum runs in double, and the normalised
// probabilities are rounded to F16 before they weight the F16 values. This
// model family is sensitive enough that skipping those roundings changes
// greedy continuations within a few dozen tokens.
// head_dim must be a multiple of 8 (the lane count of that order).
//
// Runs the path cpu_kernels() chose (LADDER_CPU); every path gives the same
// bits, so the choice changes speed only.
void attend_head(const float* q, const int32_t* block_table, int32_t first_visible,
                 int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head, float scale,
                 float* scores, float* out);

using AttendHeadFn = void (*)(const float* q, const int32_t* block_table, int32_t first_visible,
                              int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head,
                              float scale, float* scores, float* out);

// The attend_head of one path, for tests and benchmarks (Avx512 runs the Avx2
// code). The CPU must support the path; Scalar is the reference.
AttendHeadFn attend_head_for(Isa isa);

// attend_head for n_heads query heads of one token that share one KV head
// (grouped-query attention): q and out hold the heads one after another,
// head_dim apart; scores is scratch for n_heads * (n_visible - first_visible)
// floats. Each head's output equals attend_head's bit for bit; the fast paths
// convert each K and V row once for all the heads instead of once per head.
void attend_heads(const float* q, int32_t n_heads, const int32_t* block_table,
                  int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                  int32_t kv_head, float scale, float* scores, float* out);

using AttendHeadsFn = void (*)(const float* q, int32_t n_heads, const int32_t* block_table,
                               int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                               int32_t kv_head, float scale, float* scores, float* out);

AttendHeadsFn attend_heads_for(Isa isa);

// Stores one token's K and V rows (float, [n_kv_heads, head_dim]) as F16 at a slot.
void store_kv(const float* k, const float* v, int64_t slot, uint16_t* keys, uint16_t* values,
              int32_t n_kv_heads, int32_t block_size, int32_t head_dim);

}  // namespace ladder::kernels::cpu
