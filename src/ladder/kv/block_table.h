// One sequence's KV blocks, in position order: position p lives in block
// blocks()[p / block_size] at offset p % block_size. For sliding-window
// layers, blocks the window has passed are given back and their entries
// become kReleased (never read again).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ladder/kv/block_pool.h"

namespace ladder::kv {

inline constexpr BlockId kReleased = -1;

class BlockTable {
public:
    explicit BlockTable(int32_t block_size) : block_size_(block_size) {}

    // Blocks that n_tokens positions occupy.
    int32_t blocks_for(int32_t n_tokens) const {
        return (n_tokens + block_size_ - 1) / block_size_;
    }
    // Free blocks the pool must have before grow_to(n_tokens) can succeed.
    int32_t blocks_missing(int32_t n_tokens) const;
    // Allocates blocks until positions [0, n_tokens) have a place; all or
    // nothing: false (and nothing taken) when the pool is short.
    bool grow_to(int32_t n_tokens, BlockPool& pool);
    // Appends a block already taken for this table (a cached prefix block).
    void append(BlockId block) { blocks_.push_back(block); }
    // Gives every block back to the pool.
    void release_all(BlockPool& pool);
    // Gives back the blocks before index first_live (a sliding window has
    // passed them); their entries become kReleased.
    void release_before(int32_t first_live, BlockPool& pool);
    // Gives back the last block (a prefix hit cut short).
    void release_last(BlockPool& pool);
    // Gives back the blocks past those positions [0, n_tokens) occupy
    // (speculative tokens the target rejected).
    void shrink_to(int32_t n_tokens, BlockPool& pool);
    // Appends kReleased entries up to n (a prefix hit that needs no blocks
    // that far back).
    void pad_released(int32_t n);

    // Where position's K/V lives: block * block_size + offset.
    int64_t slot(int32_t position) const;
    std::span<const BlockId> blocks() const { return blocks_; }
    int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
    int32_t block_size() const { return block_size_; }

private:
    int32_t block_size_;
    std::vector<BlockId> blocks_;
    int32_t first_live_ = 0;  // entries before it are kReleased
};

}  // namespace ladder::kv
