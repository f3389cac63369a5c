// The prefix cache's disk tier: full KV blocks written to a directory, so a
// long shared prefix costs a file read instead of a prefill, after memory
// pressure or a restart. Each file holds one block: a header with the
// model's identity, the KV shape, the block's chained hash and a checksum,
// then its token ids and its K/V. A file that does not match, is truncated or
// is corrupted is removed, never loaded (a wrong size is caught when the
// directory is indexed, a wrong content when the block is read). The directory is kept under a byte
// limit, oldest files out first.
//
// Writes run on a thread of their own; the engine thread only copies the
// block's bytes into the queue. Reads are synchronous (on admission): a
// block read is far cheaper than computing it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <list>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_pool.h"
#include "ladder/model/kv_cache_storage.h"

namespace ladder::engine {

struct DiskKvCacheStats {
    int64_t n_files = 0;
    int64_t n_bytes = 0;
    int64_t n_written = 0;
    int64_t n_loaded = 0;
    int64_t n_rejected = 0;  // files removed as not matching, truncated or corrupt
};

class DiskKvCache {
public:
    // Creates the directory if needed and indexes the block files in it.
    // Throws util::InputError when it cannot be created or is not a directory.
    DiskKvCache(const std::filesystem::path& dir, int64_t max_bytes, uint64_t model_key,
                const model::KvCacheShape& shape);
    // Finishes the queued writes.
    ~DiskKvCache();
    DiskKvCache(const DiskKvCache&) = delete;
    DiskKvCache& operator=(const DiskKvCache&) = delete;

    bool contains(const kv::BlockHash& hash) const;
    // Queues the block for writing (its bytes are copied now). Does nothing
    // when the file exists or the queue is already long (memory first).
    void store(const kv::BlockHash& hash, std::span<const int32_t> tokens,
               const model::KvCacheStorage& storage, kv::BlockId block);
    // Reads the block's K/V into storage at block. False, and the file
    // removed if it exists, when it is missing, from another model, truncated
    // or corrupt, or holds other tokens.
    bool load(const kv::BlockHash& hash, std::span<const int32_t> tokens,
              model::KvCacheStorage& storage, kv::BlockId block);

    DiskKvCacheStats stats() const;
    // Blocks queued for writing and not written yet.
    int64_t n_pending_writes() const;

private:
    struct PendingWrite {
        kv::BlockHash hash;
        std::vector<uint8_t> file_bytes;
    };
    struct Entry {
        int64_t bytes = 0;
        std::list<kv::BlockHash>::iterator age;  // position in oldest_first_
    };

    void index_directory();
    void writer_loop();
    void write_file(const PendingWrite& write);
    // Under mutex_: drops files, oldest first, until the total fits.
    void enforce_limit_locked();
    void remove_locked(const kv::BlockHash& hash);
    void add_locked(const kv::BlockHash& hash, int64_t bytes);
    std::filesystem::path path_of(const kv::BlockHash& hash) const;
    int64_t file_bytes() const;         // of every well-formed block file
    int64_t layer_block_bytes() const;  // one layer's K (or V) of one block
    std::vector<uint8_t> encode(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                                const model::KvCacheStorage& storage, kv::BlockId block) const;

    std::filesystem::path dir_;
    int64_t max_bytes_;
    uint64_t model_key_;
    model::KvCacheShape shape_;
    int64_t payload_bytes_;  // K and V of one block, all layers

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::unordered_map<kv::BlockHash, Entry, kv::BlockHashHasher> files_;
    std::list<kv::BlockHash> oldest_first_;
    std::deque<PendingWrite> queue_;
    std::unordered_set<kv::BlockHash, kv::BlockHashHasher> queued_;
    DiskKvCacheStats stats_;
    bool stopping_ = false;
    std::thread writer_;  // last: starts after everything above exists
};

}  // namespace ladder::engine
