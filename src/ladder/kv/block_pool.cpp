#include "ladder/kv/block_pool.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::kv {

namespace {
constexpr BlockId kNone = -1;
}

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size)
    : block_size_(block_size),
      ref_counts_(static_cast<size_t>(n_blocks), 0),
      next_(static_cast<size_t>(n_blocks), kNone),
      prev_(static_cast<size_t>(n_blocks), kNone),
      hashes_(static_cast<size_t>(n_blocks)),
      tokens_(static_cast<size_t>(n_blocks) * static_cast<size_t>(block_size), 0),
      cached_(static_cast<size_t>(std::max(n_blocks, 0))) {
    LADDER_CHECK(n_blocks > 0 && block_size > 0, "a block pool needs blocks of some size");
    for (BlockId block = 0; block < n_blocks; ++block) push_back(plain_, block);
}

void BlockPool::check_id(BlockId block) const {
    LADDER_CHECK(block >= 0 && block < n_blocks(), "block id outside the pool");
}

void BlockPool::push_back(List& list, BlockId block) {
    prev_[block] = list.tail;
    next_[block] = kNone;
    if (list.tail == kNone) {
        list.head = block;
    } else {
        next_[list.tail] = block;
    }
    list.tail = block;
    ++list.size;
}

void BlockPool::unlink(List& list, BlockId block) {
    const BlockId prev = prev_[block];
    const BlockId next = next_[block];
    if (prev == kNone) {
        list.head = next;
    } else {
        next_[prev] = next;
    }
    if (next == kNone) {
        list.tail = prev;
    } else {
        prev_[next] = prev;
    }
    prev_[block] = kNone;
    next_[block] = kNone;
    --list.size;
}

void BlockPool::forget(BlockId block) {
    auto& hash = hashes_[static_cast<size_t>(block)];
    if (!hash) return;
    cached_.erase(*hash);
    hash.reset();
}

BlockId BlockPool::allocate() {
    LADDER_CHECK(n_free() > 0, "allocate from an exhausted block pool");
    BlockId block = kNone;
    if (plain_.size > 0) {
        block = plain_.head;
        unlink(plain_, block);
    } else {
        block = evictable_.head;
        unlink(evictable_, block);
        forget(block);
        ++n_evictions_;
    }
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
    if (--ref_counts_[block] > 0) return;
    push_back(is_cached(block) ? evictable_ : plain_, block);
}

int32_t BlockPool::ref_count(BlockId block) const {
    check_id(block);
    return ref_counts_[block];
}

bool BlockPool::has_cached(const BlockHash& hash, std::span<const int32_t> tokens) const {
    const std::optional<BlockId> found = cached_.find(hash);
    if (!found) return false;
    const auto stored = std::span<const int32_t>(tokens_).subspan(
        static_cast<size_t>(*found) * static_cast<size_t>(block_size_),
        static_cast<size_t>(block_size_));
    // A 128-bit collision must never share a block.
    return tokens.size() == stored.size() &&
           std::equal(tokens.begin(), tokens.end(), stored.begin());
}

std::optional<BlockId> BlockPool::take_cached(const BlockHash& hash,
                                              std::span<const int32_t> tokens) {
    if (!has_cached(hash, tokens)) return std::nullopt;
    const BlockId block = *cached_.find(hash);
    if (ref_counts_[block] == 0) unlink(evictable_, block);
    ++ref_counts_[block];
    return block;
}

bool BlockPool::cache_block(BlockId block, const BlockHash& hash, std::span<const int32_t> tokens) {
    check_id(block);
    LADDER_CHECK(ref_counts_[block] > 0, "caching a block nobody holds");
    LADDER_CHECK(tokens.size() == static_cast<size_t>(block_size_), "caching a partial block");
    if (is_cached(block) || !cached_.insert(hash, block)) return false;
    hashes_[static_cast<size_t>(block)] = hash;
    std::copy(tokens.begin(), tokens.end(),
              tokens_.begin() + static_cast<ptrdiff_t>(block) * block_size_);
    return true;
}

}  // namespace ladder::kv
