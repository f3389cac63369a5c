// The prefix cache's index from a block's chained hash to the block holding
// it: open addressing with linear probing in one flat array sized once for
// the pool, so a lookup is one cache line and an insert never allocates
// (a node-based map cost a malloc and two misses per block, and with a
// fleet's worth of pools, most of `ladder simulate`'s time).
// Erasing shifts the entries behind back into place, so there are no
// tombstones and probes stay short however long the cache churns.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <vector>

#include "ladder/kv/block_hash.h"

namespace ladder::kv {

class BlockHashIndex {
public:
    using BlockId = int32_t;

    // Room for max_entries at most half full.
    explicit BlockHashIndex(size_t max_entries)
        : slots_(std::bit_ceil(std::max<size_t>(2 * max_entries, 2))), mask_(slots_.size() - 1) {}

    size_t size() const { return size_; }

    std::optional<BlockId> find(const BlockHash& hash) const {
        for (size_t i = home(hash);; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.block < 0) return std::nullopt;
            if (slot.hash == hash) return slot.block;
        }
    }
    bool contains(const BlockHash& hash) const { return find(hash).has_value(); }

    // False (and nothing changes) when the hash is already there.
    bool insert(const BlockHash& hash, BlockId block) {
        size_t i = home(hash);
        for (; slots_[i].block >= 0; i = (i + 1) & mask_) {
            if (slots_[i].hash == hash) return false;
        }
        slots_[i] = Slot{hash, block};
        ++size_;
        return true;
    }

    void erase(const BlockHash& hash) {
        size_t hole = home(hash);
        for (;; hole = (hole + 1) & mask_) {
            if (slots_[hole].block < 0) return;  // not there
            if (slots_[hole].hash == hash) break;
        }
        // Backward shift: an entry after the hole moves into it unless its
        // home lies cyclically in (hole, here], where it is still reachable.
        for (size_t here = (hole + 1) & mask_; slots_[here].block >= 0; here = (here + 1) & mask_) {
            const size_t wanted = home(slots_[here].hash);
            const bool reachable = hole <= here ? (hole < wanted && wanted <= here)
                                                : (hole < wanted || wanted <= here);
            if (reachable) continue;
            slots_[hole] = slots_[here];
            hole = here;
        }
        slots_[hole] = Slot{};
        --size_;
    }

private:
    struct Slot {
        BlockHash hash;
        BlockId block = -1;  // -1: empty
    };
    // The hashes are already uniform: their low bits pick the home slot.
    size_t home(const BlockHash& hash) const { return static_cast<size_t>(hash.low) & mask_; }

    std::vector<Slot> slots_;
    size_t mask_;
    size_t size_ = 0;
};

}  // namespace ladder::kv
