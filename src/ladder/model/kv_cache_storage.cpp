#include "ladder/model/kv_cache_storage.h"

#include "ladder/util/check.h"

namespace ladder::model {

KvCacheStorage::KvCacheStorage(const KvCacheShape& shape) : shape_(shape) {
    LADDER_CHECK(shape.n_layers > 0 && shape.n_kv_heads > 0 && shape.head_dim > 0 &&
                     shape.block_size > 0 && shape.n_blocks > 0,
                 "KV cache shape must be positive; the planner validates it");
    n_elements_ = static_cast<int64_t>(shape.n_layers) * shape.n_blocks * shape.n_kv_heads *
                  shape.block_size * shape.head_dim;
    keys_ = std::make_unique_for_overwrite<uint16_t[]>(static_cast<size_t>(n_elements_));
    values_ = std::make_unique_for_overwrite<uint16_t[]>(static_cast<size_t>(n_elements_));
}

}  // namespace ladder::model
