#include "ladder/kv/block_pool.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::kv {

namespace {
constexpr BlockId kNone = -1;
}

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size)
    : block_size_(block_size),
      blocks_(static_cast<size_t>(std::max(n_blocks, 0))),
      tokens_(static_cast<size_t>(std::max(n_blocks, 0)) * static_cast<size_t>(block_size), 0),
      cached_(static_cast<size_t>(std::max(n_blocks, 0))) {
    LADDER_CHECK(n_blocks > 0 && block_size > 0, "a block pool needs blocks of some size");
    for (BlockId block = 0; block < n_blocks; ++block) push_back(plain_, block);
}

void BlockPool::check_id(BlockId block) const {
    LADDER_CHECK(block >= 0 && block < n_blocks(), "block id outside the pool");
}

void BlockPool::push_back(List& list, BlockId block) {
    BlockState& state = blocks_[static_cast<size_t>(block)];
    state.prev = list.tail;
    state.next = kNone;
    if (list.tail == kNone) {
        list.head = block;
    } else {
        blocks_[static_cast<size_t>(list.tail)].next = block;
    }
    list.tail = block;
    ++list.size;
}

void BlockPool::unlink(List& list, BlockId block) {
    BlockState& state = blocks_[static_cast<size_t>(block)];
    if (state.prev == kNone) {
        list.head = state.next;
    } else {
        blocks_[static_cast<size_t>(state.prev)].next = state.next;
    }
    if (state.next == kNone) {
        list.tail = state.prev;
    } else {
        blocks_[static_cast<size_t>(state.next)].prev = state.prev;
    }
    state.prev = kNone;
    state.next = kNone;
    --list.size;
}

void BlockPool::forget(BlockId block) {
    BlockState& state = blocks_[static_cast<size_t>(block)];
    if (state.cache == Cache::Indexed) cached_.erase(state.hash);
    state.cache = Cache::None;
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
    blocks_[static_cast<size_t>(block)].ref_count = 1;
    return block;
}

void BlockPool::retain(BlockId block) {
    check_id(block);
    BlockState& state = blocks_[static_cast<size_t>(block)];
    LADDER_CHECK(state.ref_count > 0, "retain of a free block");
    ++state.ref_count;
}

void BlockPool::release(BlockId block) {
    check_id(block);
    BlockState& state = blocks_[static_cast<size_t>(block)];
    LADDER_CHECK(state.ref_count > 0, "double free of a KV block");
    if (--state.ref_count > 0) return;
    push_back(state.cache != Cache::None ? evictable_ : plain_, block);
}

int32_t BlockPool::ref_count(BlockId block) const {
    check_id(block);
    return blocks_[static_cast<size_t>(block)].ref_count;
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
    BlockState& state = blocks_[static_cast<size_t>(block)];
    if (state.ref_count == 0) unlink(evictable_, block);
    ++state.ref_count;
    return block;
}

bool BlockPool::cache_block(BlockId block, const BlockHash& hash, std::span<const int32_t> tokens) {
    check_id(block);
    BlockState& state = blocks_[static_cast<size_t>(block)];
    LADDER_CHECK(state.ref_count > 0, "caching a block nobody holds");
    LADDER_CHECK(tokens.size() == static_cast<size_t>(block_size_), "caching a partial block");
    if (state.cache != Cache::None || !cached_.insert(hash, block)) return false;
    state.hash = hash;
    state.cache = Cache::Indexed;
    std::copy(tokens.begin(), tokens.end(),
              tokens_.begin() + static_cast<ptrdiff_t>(block) * block_size_);
    return true;
}

void BlockPool::cache_private(BlockId block, const BlockHash& hash) {
    check_id(block);
    BlockState& state = blocks_[static_cast<size_t>(block)];
    LADDER_CHECK(state.ref_count > 0, "caching a block nobody holds");
    if (state.cache != Cache::None) return;
    state.hash = hash;
    state.cache = Cache::Private;
}

std::optional<BlockId> BlockPool::take_private(BlockId block, const BlockHash& hash) {
    check_id(block);
    BlockState& state = blocks_[static_cast<size_t>(block)];
    if (state.cache != Cache::Private || !(state.hash == hash)) return std::nullopt;
    if (state.ref_count == 0) unlink(evictable_, block);
    ++state.ref_count;
    return block;
}

}  // namespace ladder::kv
