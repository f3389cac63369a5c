#include "ladder/model/kv_cache_storage.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <new>
#include <string>
#include <utility>

#include "ladder/kernels/cpu/kv_tiles.h"
#include "ladder/util/check.h"

namespace ladder::model {

namespace {

constexpr std::array<std::pair<std::string_view, tensor::DType>, 4> kKvCacheTypes{{
    {"f16", tensor::DType::F16},
    {"bf16", tensor::DType::BF16},
    {"q8_0", tensor::DType::Q8_0},
    {"q4_0", tensor::DType::Q4_0},
}};

}  // namespace

int64_t KvCacheShape::row_bytes(tensor::DType type) const {
    const auto bytes = tensor::row_bytes(type, head_dim);
    LADDER_CHECK(bytes.has_value(), "KV row not a whole number of blocks; the planner checks it");
    return static_cast<int64_t>(*bytes);
}

std::optional<tensor::DType> parse_kv_cache_type(std::string_view name, tensor::DType auto_type) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "auto") return auto_type;
    for (const auto& [type_name, type] : kKvCacheTypes) {
        if (lower == type_name) return type;
    }
    return std::nullopt;
}

std::string_view kv_cache_type_name(tensor::DType type) {
    for (const auto& [type_name, known] : kKvCacheTypes) {
        if (known == type) return type_name;
    }
    return tensor::dtype_name(type);
}

std::string kv_cache_types_name(const KvCacheTypes& types) {
    if (types.key == types.value) return std::string(kv_cache_type_name(types.key));
    return "K " + std::string(kv_cache_type_name(types.key)) + ", V " +
           std::string(kv_cache_type_name(types.value));
}

namespace {

// On a cache line: the attention kernels read a head's block in 64-byte
// vectors, which a pool from plain new[] (16 bytes past a page for a large
// one) would split across two lines each.
constexpr std::align_val_t kPoolAlignment{64};

}  // namespace

void KvCacheStorage::PoolDelete::operator()(uint8_t* pool) const {
    ::operator delete[](pool, kPoolAlignment);
}

KvCacheStorage::Pool KvCacheStorage::allocate_pool(int64_t bytes) {
    return Pool(
        static_cast<uint8_t*>(::operator new[](static_cast<size_t>(bytes), kPoolAlignment)));
}

int32_t min_block_size(const KvCacheTypes& types) {
    return kernels::cpu::stored_in_tiles(types.key) ? kernels::cpu::kKeyTilePositions : 1;
}

KvCacheStorage::KvCacheStorage(const KvCacheShape& shape)
    : KvCacheStorage(shape, std::vector<bool>(static_cast<size_t>(std::max(shape.n_layers, 0))),
                     0) {}

KvCacheStorage::KvCacheStorage(const KvCacheShape& shape, const std::vector<bool>& windowed,
                               int32_t n_window_blocks)
    : shape_(shape), n_window_blocks_(n_window_blocks) {
    LADDER_CHECK(shape.n_layers > 0 && shape.n_kv_heads > 0 && shape.head_dim > 0 &&
                     shape.block_size > 0 && shape.n_blocks > 0,
                 "KV cache shape must be positive; the planner validates it");
    LADDER_CHECK(shape.block_size % min_block_size(shape.types) == 0,
                 "a tiled K cache needs blocks of whole tiles; the planner validates it");
    LADDER_CHECK(windowed.size() == static_cast<size_t>(shape.n_layers), "one flag per layer");
    int32_t n_in_group[2] = {0, 0};
    for (bool in_window : windowed) {
        group_.push_back(in_window ? 1 : 0);
        index_in_group_.push_back(n_in_group[in_window ? 1 : 0]++);
    }
    n_window_layers_ = n_in_group[1];
    LADDER_CHECK(n_window_layers_ == 0 || n_window_blocks > 0, "a window group needs blocks");
    const int64_t rows_per_block = static_cast<int64_t>(shape.n_kv_heads) * shape.block_size;
    const int64_t n_rows[2] = {
        n_in_group[0] * shape.n_blocks * rows_per_block,
        n_in_group[1] * static_cast<int64_t>(n_window_blocks) * rows_per_block};
    for (int g = 0; g < 2; ++g) {
        if (n_rows[g] == 0) continue;
        const int64_t key_bytes = n_rows[g] * shape.key_row_bytes();
        const int64_t value_bytes = n_rows[g] * shape.value_row_bytes();
        keys_[g] = allocate_pool(key_bytes);
        values_[g] = allocate_pool(value_bytes);
        size_bytes_ += key_bytes + value_bytes;
    }
}

}  // namespace ladder::model
