// Attention of every row of a batch over its own sequence's paged K/V for one
// layer: the part of the forward pass every architecture shares. Rows of
// different sequences never see each other.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/model/attention_path.h"
#include "ladder/model/batch.h"
#include "ladder/model/forward_scratch.h"
#include "ladder/model/kv_cache_storage.h"
#include "ladder/model/model_config.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::model {

// One layer of the cache as the attention kernels read it (its pools, shape and types).
kernels::cpu::PagedKvLayer paged_kv_layer(const KvCacheStorage& kv, int32_t layer);

// A quantized K or V cache holds its rows in a rotated basis, as llama.cpp's
// does (its attn_rot_k and attn_rot_v): each run of n values of a head is
// multiplied by the n x n Walsh-Hadamard matrix before it is quantized, which
// spreads an outlying dimension over the run so that it no longer sets its
// neighbours' quantization step. K rotates by the largest power of two (64 or
// more) dividing head_dim, and q with it, so scores are unchanged but for
// rounding; V by 64, and attention's output back by the same matrix (its own
// inverse). 0: that side is not rotated (F16 and BF16, or head_dim not a
// multiple of 64, as llama.cpp decides).
int32_t key_rotation(const KvCacheShape& shape);
int32_t value_rotation(const KvCacheShape& shape);

// Stores row's K and V (float, [n_kv_heads, head_dim] each) at slot of layer,
// in the cache's types (rotated first where key_rotation and value_rotation say).
void store_kv_row(const float* k, const float* v, int64_t slot, KvCacheStorage& kv, int32_t layer);

// scratch.q [T, q_dim] -> scratch.attn [T, q_dim]. Scores are q . k * scale.
// scratch.q is rotated in place where key_rotation() says.
// window > 0: a token at position p sees positions p - window + 1 .. p (the
// reference masks a key when p - key_position >= window); 0: all of 0 .. p.
// path chooses the kernels; Fast needs head_dim a multiple of 32 and runs
// Exact for other models.
void paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                     const ModelConfig& config, float scale, int32_t window, AttentionPath path,
                     ForwardScratch& scratch, util::ThreadPool& pool);

// The fast path (paged_attention_chunked.cpp): each sequence's rows in tiles
// per KV head, each tile's chunks split over the threads when there are too
// few tiles to keep them busy, partial softmaxes merged in chunk order.
void chunked_paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                             const ModelConfig& config, float scale, int32_t window,
                             ForwardScratch& scratch, util::ThreadPool& pool);

// The exact path cut over positions and dimensions (paged_attention_split.cpp),
// for a step with fewer (token, KV head) pairs than threads (one sequence
// decoding) at a context long enough to pay for it; the same bits as the
// exact path's tasks.
bool split_attention_pays(const Batch& batch, const kernels::cpu::PagedKvLayer& kv,
                          const ModelConfig& config, int32_t window, int n_threads);
void split_paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                           const ModelConfig& config, float scale, int32_t window,
                           ForwardScratch& scratch, util::ThreadPool& pool);

}  // namespace ladder::model
