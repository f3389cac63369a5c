// The memory of the paged KV cache: K and V of every layer in fixed-size blocks,
// in the cache's types (F16 unless --kv-cache-dtype says otherwise; K and V
// may differ), allocated once. Which block belongs to whom is the kv/ module's business;
// this only stores numbers at slots.
//
// Layers may be split in two groups with block ids of their own: the full-
// attention layers, and the sliding-window layers, whose old blocks can be
// given back once every window has passed them (Batch carries a block table
// and slots per group). With one group, every layer shares the block ids.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/tensor/dtype.h"

namespace ladder::model {

// The element types of the cache's K and V rows (--kv-cache-dtype,
// --cache-type-k, --cache-type-v).
struct KvCacheTypes {
    tensor::DType key = tensor::DType::F16;
    tensor::DType value = tensor::DType::F16;
    bool operator==(const KvCacheTypes&) const = default;
};

struct KvCacheShape {
    int32_t n_layers = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;
    int32_t block_size = 16;  // tokens per block
    int32_t n_blocks = 0;
    KvCacheTypes types;

    // Bytes of one head's K (or V) row of one token: head_dim values in the type's blocks.
    int64_t key_row_bytes() const { return row_bytes(types.key); }
    int64_t value_row_bytes() const { return row_bytes(types.value); }
    // Bytes of K and V for one token in one layer, and across all layers.
    int64_t layer_token_bytes() const {
        return int64_t{n_kv_heads} * (key_row_bytes() + value_row_bytes());
    }
    int64_t bytes_per_token() const { return layer_token_bytes() * n_layers; }

private:
    int64_t row_bytes(tensor::DType type) const;
};

// "f16", "bf16", "q8_0", "q4_0" (any case), and "auto" as auto_type;
// nullopt otherwise.
std::optional<tensor::DType> parse_kv_cache_type(std::string_view name,
                                                 tensor::DType auto_type = tensor::DType::F16);
// "f16", "bf16", "q8_0", "q4_0".
std::string_view kv_cache_type_name(tensor::DType type);
// "f16", or "K q8_0, V f16" when they differ.
std::string kv_cache_types_name(const KvCacheTypes& types);

// The fewest tokens a block of these types may hold: a BF16 cache is stored
// in the attention kernel's tiles (kernels/cpu/kv_tiles.h), 16 positions of
// keys to a tile; the other types in rows.
int32_t min_block_size(const KvCacheTypes& types);

class KvCacheStorage {
public:
    // One group: every layer uses shape.n_blocks blocks.
    explicit KvCacheStorage(const KvCacheShape& shape);
    // Two groups: the layers with windowed[layer] set get n_window_blocks
    // blocks of their own; the others get shape.n_blocks.
    KvCacheStorage(const KvCacheShape& shape, const std::vector<bool>& windowed,
                   int32_t n_window_blocks);

    // n_layers counts every layer; n_blocks is the full-attention group's.
    const KvCacheShape& shape() const { return shape_; }
    bool has_window_group() const { return n_window_layers_ > 0; }
    bool in_window_group(int32_t layer) const { return group_[static_cast<size_t>(layer)] == 1; }
    int32_t n_window_blocks() const { return n_window_blocks_; }

    // Layout per group [layer in group][block][kv_head][token in block][row],
    // a row of key_row_bytes() (value_row_bytes()): the attention kernel reads
    // one head's keys of a block as one contiguous run. A BF16 head block
    // holds the same bytes as tiles instead of rows (kernels/cpu/kv_tiles.h).
    uint8_t* keys(int32_t layer, int32_t block, int32_t kv_head) {
        return keys_[group_[static_cast<size_t>(layer)]].get() +
               offset(layer, block, kv_head) * shape_.key_row_bytes();
    }
    uint8_t* values(int32_t layer, int32_t block, int32_t kv_head) {
        return values_[group_[static_cast<size_t>(layer)]].get() +
               offset(layer, block, kv_head) * shape_.value_row_bytes();
    }
    const uint8_t* keys(int32_t layer, int32_t block, int32_t kv_head) const {
        return keys_[group_[static_cast<size_t>(layer)]].get() +
               offset(layer, block, kv_head) * shape_.key_row_bytes();
    }
    const uint8_t* values(int32_t layer, int32_t block, int32_t kv_head) const {
        return values_[group_[static_cast<size_t>(layer)]].get() +
               offset(layer, block, kv_head) * shape_.value_row_bytes();
    }
    int64_t size_bytes() const { return size_bytes_; }

private:
    // Rows from the group's start to (layer, block, kv_head)'s first row.
    int64_t offset(int32_t layer, int32_t block, int32_t kv_head) const {
        const auto g = static_cast<size_t>(group_[static_cast<size_t>(layer)]);
        const int64_t n_blocks = g == 0 ? shape_.n_blocks : n_window_blocks_;
        return ((static_cast<int64_t>(index_in_group_[static_cast<size_t>(layer)]) * n_blocks +
                 block) *
                    shape_.n_kv_heads +
                kv_head) *
               shape_.block_size;
    }

    KvCacheShape shape_;
    std::vector<uint8_t> group_;           // [n_layers] 0 full attention, 1 sliding window
    std::vector<int32_t> index_in_group_;  // [n_layers]
    int32_t n_window_layers_ = 0;
    int32_t n_window_blocks_ = 0;
    int64_t size_bytes_ = 0;
    struct PoolDelete {
        void operator()(uint8_t* pool) const;
    };
    using Pool = std::unique_ptr<uint8_t[], PoolDelete>;
    static Pool allocate_pool(int64_t bytes);

    // Left uninitialized: a slot is always written before it is read, and
    // untouched pages of a large cache cost no memory until used.
    Pool keys_[2];    // per group
    Pool values_[2];  // same
};

}  // namespace ladder::model
