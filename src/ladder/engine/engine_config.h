// The engine's limits: KV cache size and the per-step budgets. Chosen by flags
// (`--kv-cache-mem`, `--block-size`, `--max-num-seqs`,
// `--max-num-batched-tokens`, `--max-model-len`) or by the defaults below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ladder/engine/redis_address.h"
#include "ladder/engine/speculative_config.h"
#include "ladder/model/kv_cache_storage.h"

namespace ladder::model {
class Model;
}

namespace ladder::engine {

struct EngineConfig {
    int32_t block_size = 16;                // tokens per KV block
    std::optional<int64_t> kv_cache_bytes;  // unset: plan_kv_cache_bytes()
    int32_t max_num_seqs = 256;             // sequences in one step
    int32_t max_num_batched_tokens = 512;   // tokens in one step (prefill chunks included)
    std::optional<int32_t> max_model_len;   // unset: the model's context
    bool prefix_caching = true;             // reuse the KV of prompts' common prefixes
    // The prefix cache's disk tier: empty = none.
    std::string kv_disk_cache_dir;
    int64_t kv_disk_cache_bytes = int64_t{10} << 30;
    // The prefix cache's remote tier (--kv-remote): unset = none.
    std::optional<RedisAddress> kv_remote;
    double kv_remote_timeout_seconds = 0.020;  // per batch of blocks read
    // Identifies the model in the block hashes, the disk files and the remote
    // keys (model_identity()); 0 is fine without a disk or remote tier.
    uint64_t model_key = 0;
    // For models with sliding-window layers (Gemma 3): give those layers
    // blocks of their own and free them once the window has passed, so a long
    // sequence's KV grows with the full-attention layers only. Off when the
    // disk or remote tier is on (their blocks hold every layer).
    bool window_kv_group = true;
    // Speculative decoding (--speculative-config); unset: off.
    std::optional<SpeculativeConfig> speculative;
};

// The KV cache the engine will allocate, after defaults are resolved.
struct KvCachePlan {
    int32_t block_size = 16;
    int32_t n_blocks = 0;  // of the full-attention layers (of every layer without a window group)
    int64_t bytes = 0;     // K and V of all layers, all blocks
    model::KvCacheTypes types;  // the rows' types (the model's, --kv-cache-dtype)
    // The sliding-window layers' group: 0 blocks = no such group.
    int32_t n_window_blocks = 0;
    int32_t window = 0;               // tokens a sliding-window layer sees
    std::vector<bool> window_layers;  // [n_layers] which layers are in that group
    int32_t max_model_len = 0;        // the context limit every request is checked against
    int64_t n_tokens() const { return static_cast<int64_t>(n_blocks) * block_size; }
};

// Resolves the config against the model and this machine. The default budget
// is what every sequence at full context would need, capped at a quarter of
// physical memory and at 4 GiB (a CPU server's weights and activations need
// the rest). Throws util::InputError for a budget below one block or limits
// out of range.
KvCachePlan plan_kv_cache(const EngineConfig& config, const model::Model& model);

}  // namespace ladder::engine
