#include "ladder/kv/block_table.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::kv {

int32_t BlockTable::blocks_missing(int32_t n_tokens) const {
    return std::max(0, blocks_for(n_tokens) - n_blocks());
}

bool BlockTable::grow_to(int32_t n_tokens, BlockPool& pool) {
    const int32_t missing = blocks_missing(n_tokens);
    if (missing > pool.n_free()) return false;
    for (int32_t i = 0; i < missing; ++i) blocks_.push_back(pool.allocate());
    return true;
}

void BlockTable::release_all(BlockPool& pool) {
    // Last block first: with the pool's LRU order, a sequence's early blocks
    // (the likeliest to be shared by a later prompt) are the last reused.
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
        if (*it != kReleased) pool.release(*it);
    }
    blocks_.clear();
    first_live_ = 0;
}

void BlockTable::release_before(int32_t first_live, BlockPool& pool) {
    first_live = std::min(first_live, n_blocks());
    for (; first_live_ < first_live; ++first_live_) {
        BlockId& block = blocks_[static_cast<size_t>(first_live_)];
        if (block != kReleased) pool.release(block);
        block = kReleased;
    }
}

void BlockTable::release_last(BlockPool& pool) {
    LADDER_CHECK(!blocks_.empty(), "release_last of an empty table");
    if (blocks_.back() != kReleased) pool.release(blocks_.back());
    blocks_.pop_back();
    first_live_ = std::min(first_live_, n_blocks());
}

void BlockTable::shrink_to(int32_t n_tokens, BlockPool& pool) {
    while (n_blocks() > blocks_for(n_tokens)) release_last(pool);
}

void BlockTable::pad_released(int32_t n) {
    while (n_blocks() < n) blocks_.push_back(kReleased);
    first_live_ = std::max(first_live_, n);
}

int64_t BlockTable::slot(int32_t position) const {
    const int32_t index = position / block_size_;
    LADDER_CHECK(
        position >= 0 && index < n_blocks() && blocks_[static_cast<size_t>(index)] != kReleased,
        "position without a KV block");
    return static_cast<int64_t>(blocks_[static_cast<size_t>(index)]) * block_size_ +
           position % block_size_;
}

}  // namespace ladder::kv
