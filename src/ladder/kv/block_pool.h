// The KV cache's bookkeeping: which of the fixed-size blocks are in use, by
// how many sequences, and which hold a known prefix (the prefix cache). Knows
// block ids, never tensors (the numbers live in model::KvCacheStorage).
// Owned by the engine thread; not thread-safe.
//
// A block is in one of three states:
// - in use: reference count > 0, held by the block tables of live sequences;
// - cached: count 0, but it holds a full block of known tokens that a later
//   prompt may reuse; evictable, least recently released first;
// - plain free: count 0, nothing worth keeping.
// Allocation takes plain free blocks first and evicts cached ones only when
// none is left, so caching never takes memory from live requests.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_hash_index.h"

namespace ladder::kv {

// A block's index in the KV cache storage. A plain int32_t because block
// tables are handed to the model as spans of them.
using BlockId = int32_t;

class BlockPool {
public:
    BlockPool(int32_t n_blocks, int32_t block_size);

    int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
    int32_t block_size() const { return block_size_; }
    // Blocks an allocation can get: plain free and evictable cached ones.
    int32_t n_free() const { return plain_.size + evictable_.size; }
    int32_t n_used() const { return n_blocks() - n_free(); }
    // Blocks holding a known prefix, in use or not.
    int32_t n_cached() const { return static_cast<int32_t>(cached_.size()); }
    int64_t n_evictions() const { return n_evictions_; }

    // Takes a plain free block, else evicts the least recently released
    // cached one. O(1). The pool must not be empty: callers check n_free()
    // first, because running out is a scheduling decision.
    BlockId allocate();
    // One more holder of a block in use (a shared prefix). O(1).
    void retain(BlockId block);
    // One holder fewer; at zero the block becomes cached (if it holds a known
    // prefix) or plain free. O(1). Releasing a free block is a bug and aborts.
    void release(BlockId block);
    int32_t ref_count(BlockId block) const;

    // The block that holds `tokens` as the block whose chained hash is `hash`,
    // taken for one more holder (out of the evictable list if it was there);
    // nullopt when there is none. The stored token ids are compared, so a
    // hash collision can never hand out the wrong block.
    std::optional<BlockId> take_cached(const BlockHash& hash, std::span<const int32_t> tokens);
    // Records that a full, computed block in use holds `tokens` under `hash`.
    // When a block with that content is already known, the first one stays the
    // cached copy and this one remains anonymous. Returns true when this
    // block became the cached copy.
    bool cache_block(BlockId block, const BlockHash& hash, std::span<const int32_t> tokens);
    // Records that a full, computed block in use holds content no other
    // sequence can ever ask for (a simulated request's own tail): it is kept
    // and evicted exactly as a cached block, but left out of the index, so
    // only its holder, which knows the block id, finds it again
    // (take_private). Saves the index's cache misses on blocks that never hit.
    void cache_private(BlockId block, const BlockHash& hash);
    // The block given to cache_private under `hash`, taken for one more
    // holder, if it still holds that content (not evicted since).
    std::optional<BlockId> take_private(BlockId block, const BlockHash& hash);
    bool is_cached(BlockId block) const {
        return blocks_[static_cast<size_t>(block)].cache != Cache::None;
    }
    // The hash a cached block is known by (nullopt: not cached).
    std::optional<BlockHash> cached_hash(BlockId block) const {
        const BlockState& state = blocks_[static_cast<size_t>(block)];
        return state.cache == Cache::None ? std::nullopt : std::optional(state.hash);
    }
    // The cached block known by hash, if any (nothing is taken).
    std::optional<BlockId> find_cached(const BlockHash& hash) const { return cached_.find(hash); }
    // Whether take_cached would find the block (nothing is taken).
    bool has_cached(const BlockHash& hash, std::span<const int32_t> tokens) const;

private:
    enum class Cache : uint8_t { None, Indexed, Private };
    // All a block's bookkeeping in one record, so that touching a block is
    // one cache miss rather than one per array (a fleet of simulated pools
    // is far larger than the caches). The links make an intrusive doubly
    // linked list over block ids; every block is in at most one list.
    struct BlockState {
        BlockHash hash;  // when cache != None
        int32_t ref_count = 0;
        BlockId next = -1;
        BlockId prev = -1;
        Cache cache = Cache::None;
    };
    struct List {
        BlockId head = -1;
        BlockId tail = -1;
        int32_t size = 0;
    };
    void push_back(List& list, BlockId block);
    void unlink(List& list, BlockId block);
    void check_id(BlockId block) const;
    void forget(BlockId block);  // drops a block's cache entry

    int32_t block_size_;
    std::vector<BlockState> blocks_;
    List plain_;
    List evictable_;               // cached blocks with count 0, least recently released first
    std::vector<int32_t> tokens_;  // [n_blocks, block_size]: the tokens of cached blocks
    BlockHashIndex cached_;
    int64_t n_evictions_ = 0;
};

}  // namespace ladder::kv
