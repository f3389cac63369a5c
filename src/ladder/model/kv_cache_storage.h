// The memory of the paged KV cache: K and V of every layer in fixed-size blocks,
// F16, allocated once. Which block belongs to whom is the kv/ module's business;
// this only stores numbers at slots.
#pragma once

#include <cstdint>
#include <memory>

namespace ladder::model {

struct KvCacheShape {
    int32_t n_layers = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;
    int32_t block_size = 16;  // tokens per block
    int32_t n_blocks = 0;

    // Bytes of K and V for one token across all layers.
    int64_t bytes_per_token() const {
        return int64_t{2} * n_layers * n_kv_heads * head_dim * static_cast<int64_t>(sizeof(uint16_t));
    }
};

class KvCacheStorage {
public:
    explicit KvCacheStorage(const KvCacheShape& shape);

    const KvCacheShape& shape() const { return shape_; }

    // Layout [layer][block][kv_head][token in block][head_dim]: the attention
    // kernel reads one head's keys of a block as one contiguous run.
    uint16_t* keys(int32_t layer, int32_t block, int32_t kv_head) {
        return keys_.get() + offset(layer, block, kv_head);
    }
    uint16_t* values(int32_t layer, int32_t block, int32_t kv_head) {
        return values_.get() + offset(layer, block, kv_head);
    }
    const uint16_t* keys(int32_t layer, int32_t block, int32_t kv_head) const {
        return keys_.get() + offset(layer, block, kv_head);
    }
    const uint16_t* values(int32_t layer, int32_t block, int32_t kv_head) const {
        return values_.get() + offset(layer, block, kv_head);
    }
    int64_t size_bytes() const {
        return 2 * n_elements_ * static_cast<int64_t>(sizeof(uint16_t));
    }

private:
    int64_t offset(int32_t layer, int32_t block, int32_t kv_head) const {
        return ((static_cast<int64_t>(layer) * shape_.n_blocks + block) * shape_.n_kv_heads +
                kv_head) *
               shape_.block_size * shape_.head_dim;
    }

    KvCacheShape shape_;
    int64_t n_elements_ = 0;  // of keys_, and of values_
    // Left uninitialized: a slot is always written before it is read, and
    // untouched pages of a large cache cost no memory until used.
    std::unique_ptr<uint16_t[]> keys_;    // [n_layers, n_blocks, n_kv_heads, block_size, head_dim]
    std::unique_ptr<uint16_t[]> values_;  // same
};

}  // namespace ladder::model
