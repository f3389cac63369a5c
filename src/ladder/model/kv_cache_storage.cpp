#include "ladder/model/kv_cache_storage.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::model {

KvCacheStorage::KvCacheStorage(const KvCacheShape& shape)
    : KvCacheStorage(shape, std::vector<bool>(static_cast<size_t>(std::max(shape.n_layers, 0))),
                     0) {}

KvCacheStorage::KvCacheStorage(const KvCacheShape& shape, const std::vector<bool>& windowed,
                               int32_t n_window_blocks)
    : shape_(shape), n_window_blocks_(n_window_blocks) {
    LADDER_CHECK(shape.n_layers > 0 && shape.n_kv_heads > 0 && shape.head_dim > 0 &&
                     shape.block_size > 0 && shape.n_blocks > 0,
                 "KV cache shape must be positive; the planner validates it");
    LADDER_CHECK(windowed.size() == static_cast<size_t>(shape.n_layers), "one flag per layer");
    int32_t n_in_group[2] = {0, 0};
    for (bool in_window : windowed) {
        group_.push_back(in_window ? 1 : 0);
        index_in_group_.push_back(n_in_group[in_window ? 1 : 0]++);
    }
    n_window_layers_ = n_in_group[1];
    LADDER_CHECK(n_window_layers_ == 0 || n_window_blocks > 0, "a window group needs blocks");
    const int64_t per_block =
        static_cast<int64_t>(shape.n_kv_heads) * shape.block_size * shape.head_dim;
    const int64_t n_elements[2] = {
        n_in_group[0] * shape.n_blocks * per_block,
        n_in_group[1] * static_cast<int64_t>(n_window_blocks) * per_block};
    for (int g = 0; g < 2; ++g) {
        if (n_elements[g] == 0) continue;
        keys_[g] = std::make_unique_for_overwrite<uint16_t[]>(static_cast<size_t>(n_elements[g]));
        values_[g] = std::make_unique_for_overwrite<uint16_t[]>(static_cast<size_t>(n_elements[g]));
        size_bytes_ += 2 * n_elements[g] * static_cast<int64_t>(sizeof(uint16_t));
    }
}

}  // namespace ladder::model
