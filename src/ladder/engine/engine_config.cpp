#include "ladder/engine/engine_config.h"

#include <unistd.h>

#include <algorithm>

#include "ladder/model/model.h"
#include "ladder/util/error.h"

namespace ladder::engine {

namespace {

constexpr int64_t kDefaultCapBytes = int64_t{4} << 30;

int64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return kDefaultCapBytes * 4;
    return static_cast<int64_t>(pages) * page_size;
}

}  // namespace

KvCachePlan plan_kv_cache(const EngineConfig& config, const model::Model& model) {
    const int32_t block_size = config.block_size;
    if (block_size < 1 || block_size > 1024 || (block_size & (block_size - 1)) != 0) {
        util::fail("--block-size must be a power of two in [1, 1024] (got {})", block_size);
    }
    const int32_t min_block_size = model::min_block_size(model.kv_cache_types());
    if (block_size < min_block_size) {
        util::fail(
            "a {} K cache is stored in tiles of {} positions: --block-size must be at "
            "least {} (got {})",
            model::kv_cache_type_name(model.kv_cache_types().key), min_block_size, min_block_size,
            block_size);
    }
    if (config.max_num_seqs < 1)
        util::fail("--max-num-seqs must be >= 1 (got {})", config.max_num_seqs);
    if (config.max_num_batched_tokens < 1) {
        util::fail("--max-num-batched-tokens must be >= 1 (got {})", config.max_num_batched_tokens);
    }
    const int32_t model_context = model.config().context_length;
    const int32_t max_model_len = config.max_model_len.value_or(model_context);
    if (max_model_len < 1 || max_model_len > model_context) {
        util::fail("--max-model-len must be in [1, {}], the model's context (got {})",
                   model_context, max_model_len);
    }
    const model::ModelConfig& mc = model.config();
    // K and V of one token in one layer, in the cache's types.
    const int64_t layer_token_bytes = model.kv_cache_shape(1, block_size).layer_token_bytes();
    std::vector<bool> window_layers(static_cast<size_t>(mc.n_layers));
    int32_t n_window_layers = 0;
    for (int32_t l = 0; l < mc.n_layers; ++l) {
        window_layers[static_cast<size_t>(l)] = mc.is_local_layer(l);
        n_window_layers += mc.is_local_layer(l) ? 1 : 0;
    }
    const bool split = config.window_kv_group && config.kv_disk_cache_dir.empty() &&
                       !config.kv_remote && n_window_layers > 0 && n_window_layers < mc.n_layers;
    const int32_t n_full_layers = split ? mc.n_layers - n_window_layers : mc.n_layers;
    const int64_t bytes_per_block = layer_token_bytes * n_full_layers * block_size;
    // A sequence's window blocks at most: the window behind its next token,
    // the largest chunk it computes in one step, and two partial blocks.
    const int64_t window_blocks_per_seq =
        split ? (mc.sliding_window + config.max_num_batched_tokens) / block_size + 2 : 0;
    const int64_t window_block_bytes = layer_token_bytes * n_window_layers * block_size;
    const int64_t window_bytes_wanted =
        static_cast<int64_t>(config.max_num_seqs) * window_blocks_per_seq * window_block_bytes;

    int64_t budget = 0;
    if (config.kv_cache_bytes) {
        budget = *config.kv_cache_bytes;
    } else {
        const int64_t wanted = static_cast<int64_t>(config.max_num_seqs) *
                                   ((max_model_len + block_size - 1) / block_size) *
                                   bytes_per_block +
                               window_bytes_wanted;
        budget = std::min({wanted, kDefaultCapBytes, physical_memory_bytes() / 4});
    }
    // The window group gets what every sequence could use, at most half the
    // budget, and never less than one sequence needs.
    int64_t n_window_blocks = 0;
    if (split) {
        n_window_blocks = std::max(window_blocks_per_seq,
                                   std::min(window_bytes_wanted, budget / 2) / window_block_bytes);
    }
    const int64_t n_blocks = (budget - n_window_blocks * window_block_bytes) / bytes_per_block;
    if (n_blocks < 1) {
        util::fail("the KV cache budget of {} bytes is below one block ({} bytes)", budget,
                   bytes_per_block);
    }
    if (n_blocks > (int64_t{1} << 30))
        util::fail("the KV cache budget of {} bytes is too large", budget);
    KvCachePlan plan;
    plan.block_size = block_size;
    plan.types = model.kv_cache_types();
    plan.n_blocks = static_cast<int32_t>(n_blocks);
    plan.bytes = n_blocks * bytes_per_block + n_window_blocks * window_block_bytes;
    plan.max_model_len = max_model_len;
    if (split) {
        plan.n_window_blocks = static_cast<int32_t>(n_window_blocks);
        plan.window = mc.sliding_window;
        plan.window_layers = std::move(window_layers);
    }
    return plan;
}

}  // namespace ladder::engine
