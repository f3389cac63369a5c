// The layout of a BF16 KV cache: each head's K and V of a block stored in the
// tiles the BF16 attention kernel (chunked_attention_avx512.cpp, vdpbf16ps)
// multiplies, so decode at depth reads the cache as it lies instead of
// converting and transposing every position's rows at every step. A head's
// block keeps the bytes rows would take (block_size x head_dim BF16), in
// another order; the other cache types are stored as rows.
//
//   keys:   per group of 16 positions, per dimension pair i, 16 words (one
//           512-bit vector) of (k[2i], k[2i+1]) of the group's positions:
//           one broadcast pair of a query meets 16 keys
//   values: per pair of positions (2j, 2j + 1), per dimension d, one word
//           (v[2j][d], v[2j+1][d]): one broadcast pair of probabilities
//           weighs 16 dimensions of both positions
//
// Keys need blocks of a multiple of 16 positions (the planner checks, through
// model::min_block_size).
// Readers that want rows (the exact path, the F32 chunked paths) gather one
// through KvRowReader.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/tensor/dtype.h"

namespace ladder::kernels::cpu {

// Positions per key tile: the lanes of one 512-bit vector of F32 scores.
constexpr int32_t kKeyTilePositions = 16;

// Whether a cache of this type is stored in tiles (BF16) rather than rows.
inline bool stored_in_tiles(tensor::DType type) { return type == tensor::DType::BF16; }

// The BF16 element of (position in block, dimension) within a head's block.
inline int64_t key_tile_index(int32_t in_block, int32_t d, int32_t head_dim) {
    const int64_t pair_row = int64_t{in_block / kKeyTilePositions} * (head_dim / 2) + d / 2;
    return pair_row * (2 * kKeyTilePositions) + (in_block % kKeyTilePositions) * 2 + (d & 1);
}
inline int64_t value_tile_index(int32_t in_block, int32_t d, int32_t head_dim) {
    return (int64_t{in_block / 2} * head_dim + d) * 2 + (in_block & 1);
}

// One position's K (V) of head_dim floats into a head's block, rounded to
// BF16 as tensor::quantize_row rounds a BF16 row.
void store_key_in_tiles(const float* x, uint16_t* head_block, int32_t in_block, int32_t head_dim);
void store_value_in_tiles(const float* x, uint16_t* head_block, int32_t in_block, int32_t head_dim);

// One head's rows of a layer's K or V, whatever the cache stores: a pointer
// into the pool for rows, or the position's row gathered from the tiles into
// a buffer of its own (valid until the next call).
class KvRowReader {
public:
    enum class Side { Keys, Values };
    KvRowReader(const PagedKvLayer& kv, Side side, const int32_t* block_table, int32_t kv_head);

    const uint8_t* operator()(int32_t position);

private:
    const uint8_t* pool_;
    const int32_t* block_table_;
    int64_t row_bytes_;
    int64_t block_stride_;  // bytes from one pool block to the next
    int64_t head_offset_;   // bytes from a pool block to this head's rows
    int32_t block_size_;
    int32_t head_dim_;
    bool tiles_;
    Side side_;
    alignas(64) uint16_t row_[kMaxHeadDim];
};

}  // namespace ladder::kernels::cpu
