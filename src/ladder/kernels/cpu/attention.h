// Attention of one query head over a sequence's paged K/V. One row of
// scores at a time (never a T x T matrix), with the roundings llama.cpp's CPU
// path makes, because greedy outputs must agree with it token for token.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/cpu_features.h"
#include "ladder/tensor/dtype.h"

namespace ladder::kernels::cpu {

// One layer's K and V pools: [n_blocks][n_kv_heads][block_size] rows of
// head_dim values each, a row in its type's bytes (F16: head_dim halves;
// Q8_0, Q4_0: head_dim / 32 ggml blocks, each with its F16 scale; BF16).
struct PagedKvLayer {
    const void* keys = nullptr;
    const void* values = nullptr;
    int32_t n_kv_heads = 0;
    int32_t block_size = 0;
    int32_t head_dim = 0;
    tensor::DType key_type = tensor::DType::F16;
    tensor::DType value_type = tensor::DType::F16;

    bool is_f16() const {
        return key_type == tensor::DType::F16 && value_type == tensor::DType::F16;
    }
    int64_t key_row_bytes() const;
    int64_t value_row_bytes() const;
    // The row of a position in pool (keys or values, rows of row_bytes),
    // through the sequence's block table. Hot loops take the row bytes once.
    // Only for a cache stored in rows: a BF16 one is in tiles (kv_tiles.h,
    // whose KvRowReader reads either).
    const uint8_t* row(const void* pool, int64_t row_bytes, const int32_t* block_table,
                       int32_t kv_head, int32_t position) const {
        const int64_t block = block_table[position / block_size];
        return static_cast<const uint8_t*>(pool) +
               ((block * n_kv_heads + kv_head) * block_size + position % block_size) * row_bytes;
    }
    // The F16 pools of an is_f16() layer, as the F16 kernels index them.
    const uint16_t* f16_keys() const { return static_cast<const uint16_t*>(keys); }
    const uint16_t* f16_values() const { return static_cast<const uint16_t*>(values); }
};

// The types a KV cache row may have: F16, BF16, Q8_0 and Q4_0 (the last two
// need head_dim a multiple of 32).
bool kv_cache_type_supported(tensor::DType type);

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

using AttendHeadsFn = void (*)(const float* q, int32_t n_heads, const int32_t* block_table,
                               int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                               int32_t kv_head, float scale, float* scores, float* out);

// attend_heads for a layer of any KV types (is_f16() or not), in the order
// llama.cpp's flash-attention CPU path uses for quantized caches: q is
// converted to the key type's dot-product type (Q8_0 for Q8_0 and Q4_0 keys),
// each score is that integer dot product times scale, the softmax runs in
// float, and every value row is dequantized (one row at a time, never the
// whole cache) and weighted in F32. The paths give the same bits.
void attend_heads_any_type(const float* q, int32_t n_heads, const int32_t* block_table,
                           int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                           int32_t kv_head, float scale, float* scores, float* out);

AttendHeadsFn attend_heads_any_type_for(Isa isa);

// attend_head for n_heads query heads of one token that share one KV head
// (grouped-query attention): q and out hold the heads one after another,
// head_dim apart; scores is scratch for n_heads * (n_visible - first_visible)
// floats. Each head's output equals attend_head's bit for bit; the fast paths
// convert each K and V row once for all the heads instead of once per head.
// A layer that is not is_f16() runs attend_heads_any_type.
void attend_heads(const float* q, int32_t n_heads, const int32_t* block_table,
                  int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                  int32_t kv_head, float scale, float* scores, float* out);

AttendHeadsFn attend_heads_for(Isa isa);

// Indices [begin, end): positions of a context or dimensions of a head.
struct IndexRange {
    int32_t begin;
    int32_t end;
    int32_t size() const { return end - begin; }
};

// The groups of 8 positions, aligned to position 0, that [first_visible,
// n_visible) touches: the softmax sums each in float, then the groups in double.
inline int32_t softmax_group_count(int32_t first_visible, int32_t n_visible) {
    return n_visible > first_visible ? (n_visible - 1) / 8 - first_visible / 8 + 1 : 0;
}

// attend_heads of an is_f16() layer cut into three steps, each of which may be
// split over threads, for a token whose head groups alone cannot keep every
// thread busy (one sequence decoding, fewer KV heads than threads).
// Run in order, the steps give attend_heads' bits: a score depends only on
// its query and key, an exp on its score and the maximum, the group sums are
// added in position order whichever step computed them, and each output
// dimension is its own fma chains. With scores [n_heads][n_scores] and
// group_sums [n_heads][softmax_group_count] (n_scores = n_visible -
// first_visible):
struct SplitAttentionKernels {
    // The scores of positions [positions) for every head, and each head's
    // largest of them in max_scores[h].
    void (*score)(const float* q, int32_t n_heads, const int32_t* block_table,
                  int32_t first_visible, int32_t n_visible, IndexRange positions,
                  const PagedKvLayer& kv, int32_t kv_head, float scale, float* scores,
                  float* max_scores);
    // The exps of positions [positions), given each head's maximum over all
    // of them, and the sums of the groups they hold. positions.begin is
    // first_visible or a multiple of 8, positions.end n_visible or one.
    void (*exponentiate)(float* scores, int32_t n_heads, int32_t first_visible,
                         int32_t n_visible, IndexRange positions, const float* max_scores,
                         float* group_sums);
    // Dimensions [dims) (multiples of 16) of every head's output, from all
    // the exps and group sums; probabilities is scratch for n_heads * n_scores
    // floats.
    void (*weigh)(const float* exps, int32_t n_heads, const float* group_sums,
                  const int32_t* block_table, int32_t first_visible, int32_t n_visible,
                  const PagedKvLayer& kv, int32_t kv_head, IndexRange dims, float* probabilities,
                  float* out);
};

// The split steps of the path cpu_kernels() chose, or null where it has none
// (the scalar path: run attend_heads whole). head_dim must be a multiple of 16.
const SplitAttentionKernels* split_attention();
const SplitAttentionKernels* split_attention_for(Isa isa);

// Stores one token's K and V rows (float, [n_kv_heads, head_dim]) at a slot
// of a layer's pools (keys, values: the pools layout describes; its own
// pointers are not used), in their types, in the values llama.cpp's CPU
// cache holds: F16 and BF16 rounded to nearest even, Q4_0 by ggml's reference
// quantizer, Q8_0 by ggml-cpu's x86 one (127 / amax, halves to even). BF16
// goes into the attention kernel's tiles (kv_tiles.h), the others into rows
// of ggml's bytes.
void store_kv(const float* k, const float* v, int64_t slot, void* keys, void* values,
              const PagedKvLayer& layout);

}  // namespace ladder::kernels::cpu
