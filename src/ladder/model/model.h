// A loaded model: validated config and weights, and forward(Batch) -> logits.
// Knows batches, never requests.
#pragma once

#include <memory>
#include <span>

#include "ladder/model/attention_path.h"
#include "ladder/model/batch.h"
#include "ladder/model/kv_cache_storage.h"
#include "ladder/model/model_config.h"

namespace ladder::gguf {
class GgufFile;
}
namespace ladder::util {
class ThreadPool;
}

namespace ladder::model {

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelConfig& config() const = 0;

    // Computes every token of the batch, writes their K/V at their slots, and
    // fills logits [batch.logit_rows.size(), vocab_size]. Not thread-safe:
    // the engine thread owns the model and its scratch.
    virtual void forward(const Batch& batch, KvCacheStorage& kv, util::ThreadPool& pool,
                         std::span<float> logits) = 0;

    KvCacheShape kv_cache_shape(int32_t n_blocks, int32_t block_size) const {
        return {config().n_layers, config().n_kv_heads, config().head_dim, block_size,
                n_blocks,          kv_cache_types_};
    }

    // The types of the KV cache rows every cache of this model holds; chosen
    // once after loading (--kv-cache-dtype). Throws util::InputError for a
    // type the cache cannot hold, or a quantized one when head_dim is not a
    // multiple of its 32-value blocks.
    void set_kv_cache_types(const KvCacheTypes& types);
    const KvCacheTypes& kv_cache_types() const { return kv_cache_types_; }

    // The attention kernels forward() runs; chosen once after loading (--attention).
    void set_attention_path(AttentionPath path) { attention_path_ = path; }
    AttentionPath attention_path() const { return attention_path_; }

protected:
    AttentionPath attention_path_ = kDefaultAttentionPath;
    KvCacheTypes kv_cache_types_;
};

// Builds the model of the file's general.architecture from the registry of
// architectures. The file must outlive the model (weights are views into it).
// Throws util::InputError for an unknown architecture or missing/misshapen tensors.
std::unique_ptr<Model> load_model(const gguf::GgufFile& file);

}  // namespace ladder::model
