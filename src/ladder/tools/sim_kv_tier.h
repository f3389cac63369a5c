// A prefix-cache tier below a simulated replica's memory: the engine's disk
// tier (each replica's own) or its remote tier (Redis, shared by the fleet).
// As in the engine, every block a replica's memory caches anew is written
// through to the tiers, and a block memory lacks is read back from disk,
// else remote. A tier holds `capacity_blocks` and drops its oldest write
// first (the disk tier deletes its oldest files; Redis's allkeys-lru is
// taken as oldest write first too, reads not refreshing a key).
//
// Blocks no other request can ask for (a request's private tail) are only
// counted: each takes room, and is known by its write's stamp, which is all
// its own request needs to find it again after a preemption. Shared blocks
// are kept by hash. Both are exact for a FIFO of that capacity.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "ladder/kv/block_hash.h"

namespace ladder::tools {

struct KvTierOptions {
    int64_t capacity_bytes = 0;  // 0: no such tier
    double bytes_per_s = 0.0;    // reading a block back
    double latency_s = 0.0;      // once per admission that reads from the tier
};

class SimKvTier {
public:
    // capacity_blocks >= 1.
    explicit SimKvTier(int64_t capacity_blocks);

    // A write's stamp; kNotWritten for none.
    static constexpr int64_t kNotWritten = -1;

    // Whether the block known by hash is still held.
    bool contains(const kv::BlockHash& hash);
    // A shared block written through (skipped when already held).
    void write(const kv::BlockHash& hash);
    // A private block written through; returns its stamp.
    int64_t write_private() { return n_written_++; }
    bool holds_stamp(int64_t stamp) const {
        return stamp != kNotWritten && n_written_ - stamp <= capacity_;
    }

    int64_t n_written() const { return n_written_; }

private:
    void drop_expired();

    int64_t capacity_;
    int64_t n_written_ = 0;
    std::unordered_map<kv::BlockHash, int64_t, kv::BlockHashHasher> stamps_;
    size_t sweep_at_ = 1024;  // stamps_ is swept of expired entries past this size
};

}  // namespace ladder::tools
