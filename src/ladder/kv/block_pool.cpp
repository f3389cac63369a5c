#include "ladder/kv/block_pool.h"

#include "ladder/util/check.h"

namespace ladder::kv {

namespace {
constexpr BlockId kNone = -1;
}

BlockPool::BlockPool(int32_t n_blocks)
    : ref_counts_(static_cast<size_t>(n_blocks), 0),
      next_free_(static_cast<size_t>(n_blocks), kNone),
      prev_free_(static_cast<size_t>(n_blocks), kNone) {
    LADDER_CHECK(n_blocks > 0, "a block pool needs at least one block");
    for (BlockId block = 0; block < n_blocks; ++block) push_back_free(block);
}

void BlockPool::check_id(BlockId block) const {
    LADDER_CHECK(block >= 0 && block < n_blocks(), "block id outside the pool");
}

void BlockPool::push_back_free(BlockId block) {
    prev_free_[block] = free_tail_;
    next_free_[block] = kNone;
    if (free_tail_ == kNone) {
        free_head_ = block;
    } else {
        next_free_[free_tail_] = block;
    }
    free_tail_ = block;
    ++n_free_;
}

void BlockPool::unlink_free(BlockId block) {
    const BlockId prev = prev_free_[block];
    const BlockId next = next_free_[block];
    if (prev == kNone) {
        free_head_ = next;
    } else {
        next_free_[prev] = next;
    }
    if (next == kNone) {
        free_tail_ = prev;
    } else {
        prev_free_[next] = prev;
    }
    prev_free_[block] = kNone;
    next_free_[block] = kNone;
    --n_free_;
}

BlockId BlockPool::allocate() {
    LADDER_CHECK(n_free_ > 0, "allocate from an exhausted block pool");
    const BlockId block = free_head_;
    unlink_free(block);
    ref_counts_[block] = 1;
    return block;
}

void BlockPool::retain(BlockId block) {
    check_id(block);
    LADDER_CHECK(ref_counts_[block] > 0, "retain of a free block");
    ++ref_counts_[block];
}

void BlockPool::release(BlockId block) {
    check_id(block);
    LADDER_CHECK(ref_counts_[block] > 0, "double free of a KV block");
    if (--ref_counts_[block] == 0) push_back_free(block);
}

int32_t BlockPool::ref_count(BlockId block) const {
    check_id(block);
    return ref_counts_[block];
}

}  // namespace ladder::kv
