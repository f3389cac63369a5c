#include "ladder/kernels/cpu/kv_tiles.h"

#include <cstring>

#include "ladder/tensor/half.h"

namespace ladder::kernels::cpu {

void store_key_in_tiles(const float* x, uint16_t* head_block, int32_t in_block, int32_t head_dim) {
    for (int32_t d = 0; d < head_dim; ++d) {
        head_block[key_tile_index(in_block, d, head_dim)] = tensor::fp32_to_bf16(x[d]);
    }
}

void store_value_in_tiles(const float* x, uint16_t* head_block, int32_t in_block,
                          int32_t head_dim) {
    for (int32_t d = 0; d < head_dim; ++d) {
        head_block[value_tile_index(in_block, d, head_dim)] = tensor::fp32_to_bf16(x[d]);
    }
}

KvRowReader::KvRowReader(const PagedKvLayer& kv, Side side, const int32_t* block_table,
                         int32_t kv_head)
    : pool_(static_cast<const uint8_t*>(side == Side::Keys ? kv.keys : kv.values)),
      block_table_(block_table),
      row_bytes_(side == Side::Keys ? kv.key_row_bytes() : kv.value_row_bytes()),
      block_stride_(int64_t{kv.n_kv_heads} * kv.block_size * row_bytes_),
      head_offset_(int64_t{kv_head} * kv.block_size * row_bytes_),
      block_size_(kv.block_size),
      head_dim_(kv.head_dim),
      tiles_(stored_in_tiles(side == Side::Keys ? kv.key_type : kv.value_type)),
      side_(side) {}

const uint8_t* KvRowReader::operator()(int32_t position) {
    const uint8_t* head_block =
        pool_ + block_table_[position / block_size_] * block_stride_ + head_offset_;
    const int32_t in_block = position % block_size_;
    if (!tiles_) return head_block + in_block * row_bytes_;
    const auto* words = reinterpret_cast<const uint32_t*>(head_block);
    if (side_ == Side::Keys) {
        // A position's dimension pairs are whole words, one a tile row apart.
        const uint32_t* pairs = words + key_tile_index(in_block, 0, head_dim_) / 2;
        for (int32_t i = 0; i < head_dim_ / 2; ++i) {
            std::memcpy(row_ + 2 * i, pairs + i * kKeyTilePositions, sizeof(uint32_t));
        }
    } else {
        // A position's values are one half of each word of its pair's row.
        const uint32_t* pair = words + value_tile_index(in_block & ~1, 0, head_dim_) / 2;
        const int shift = (in_block & 1) * 16;
        for (int32_t d = 0; d < head_dim_; ++d) row_[d] = static_cast<uint16_t>(pair[d] >> shift);
    }
    return reinterpret_cast<const uint8_t*>(row_);
}

}  // namespace ladder::kernels::cpu
