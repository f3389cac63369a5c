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
    if (config.max_num_seqs < 1) util::fail("--max-num-seqs must be >= 1 (got {})", config.max_num_seqs);
    if (config.max_num_batched_tokens < 1) {
        util::fail("--max-num-batched-tokens must be >= 1 (got {})", config.max_num_batched_tokens);
    }
    const int32_t model_context = model.config().context_length;
    const int32_t max_model_len = config.max_model_len.value_or(model_context);
    if (max_model_len < 1 || max_model_len > model_context) {
        util::fail("--max-model-len must be in [1, {}], the model's context (got {})", model_context,
                   max_model_len);
    }
    const int64_t bytes_per_token = model.kv_cache_shape(1, block_size).bytes_per_token();
    const int64_t bytes_per_block = bytes_per_token * block_size;

    int64_t budget = 0;
    if (config.kv_cache_bytes) {
        budget = *config.kv_cache_bytes;
    } else {
        const int64_t wanted = static_cast<int64_t>(config.max_num_seqs) *
                               ((max_model_len + block_size - 1) / block_size) * bytes_per_block;
        budget = std::min({wanted, kDefaultCapBytes, physical_memory_bytes() / 4});
    }
    const int64_t n_blocks = budget / bytes_per_block;
    if (n_blocks < 1) {
        util::fail("the KV cache budget of {} bytes is below one block ({} bytes)", budget,
                   bytes_per_block);
    }
    if (n_blocks > (int64_t{1} << 30)) util::fail("the KV cache budget of {} bytes is too large", budget);
    KvCachePlan plan;
    plan.block_size = block_size;
    plan.n_blocks = static_cast<int32_t>(n_blocks);
    plan.bytes = n_blocks * bytes_per_block;
    plan.max_model_len = max_model_len;
    return plan;
}

}  // namespace ladder::engine
