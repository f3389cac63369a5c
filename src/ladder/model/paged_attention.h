// Attention of every row of a batch over its own sequence's paged K/V for one
// layer: the part of the forward pass every architecture shares. Rows of
// different sequences never see each other.
#pragma once

#include <cstdint>

#include "ladder/model/batch.h"
#include "ladder/model/forward_scratch.h"
#include "ladder/model/kv_cache_storage.h"
#include "ladder/model/model_config.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::model {

// scratch.q [T, q_dim] -> scratch.attn [T, q_dim]. Scores are q . k * scale.
// window > 0: a token at position p sees positions p - window + 1 .. p (the
// reference masks a key when p - key_position >= window); 0: all of 0 .. p.
void paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                     const ModelConfig& config, float scale, int32_t window,
                     ForwardScratch& scratch, util::ThreadPool& pool);

}  // namespace ladder::model
