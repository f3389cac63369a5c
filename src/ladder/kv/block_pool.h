// The KV cache's bookkeeping: which of the fixed-size blocks are in use, and
// by how many sequences. Knows block ids, never tensors (the numbers live in
// model::KvCacheStorage). Owned by the engine thread; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace ladder::kv {

// A block's index in the KV cache storage. A plain int32_t because block
// tables are handed to the model as spans of them.
using BlockId = int32_t;

class BlockPool {
public:
    explicit BlockPool(int32_t n_blocks);

    int32_t n_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }
    int32_t n_free() const { return n_free_; }
    int32_t n_used() const { return n_blocks() - n_free_; }

    // Takes the free block that was freed longest ago (the prefix cache will
    // evict in that order). O(1). The pool must not be empty: callers check
    // n_free() first, because running out is a scheduling decision.
    BlockId allocate();
    // One more holder of an allocated block (a shared prefix). O(1).
    void retain(BlockId block);
    // One holder fewer; the block returns to the free list at zero. O(1).
    // Releasing a free block is a bug and aborts.
    void release(BlockId block);

    int32_t ref_count(BlockId block) const;

private:
    void check_id(BlockId block) const;
    void push_back_free(BlockId block);
    void unlink_free(BlockId block);

    std::vector<int32_t> ref_counts_;
    // The free list is intrusive and doubly linked over block ids, so a block
    // can later leave it from the middle (a prefix-cache hit) in O(1).
    std::vector<BlockId> next_free_;
    std::vector<BlockId> prev_free_;
    BlockId free_head_ = -1;
    BlockId free_tail_ = -1;
    int32_t n_free_ = 0;
};

}  // namespace ladder::kv
