// The prefix cache's disk tier: full KV blocks written to a directory, so a
// long shared prefix costs a file read instead of a prefill, after memory
// pressure or a restart. Each file holds one block: a header with the
// model's identity, the KV shape, the block's chained hash and a checksum
// keyed by the directory's secret, then its token ids and its K/V. A file
// that does not match, is truncated, is corrupted or was not written with
// the secret (planted, or copied from another cache) is removed, never
// loaded. The directory is kept under a byte limit, oldest files out first.
//
// The directory is a CacheDirectory (0700, this user's, files 0600, no
// symlink followed, no FIFO blocked on). Only files named like blocks are
// indexed or removed; other processes' temporary files are left alone; an
// error that may pass (no descriptor, no memory) never removes a file.
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

#include "ladder/engine/cache_directory.h"
#include "ladder/engine/keyed_hash.h"
#include "ladder/engine/kv_block_codec.h"
#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_pool.h"
#include "ladder/model/kv_cache_storage.h"

namespace ladder::engine {

struct DiskKvCacheStats {
    int64_t n_files = 0;
    int64_t n_bytes = 0;
    int64_t n_written = 0;
    int64_t n_loaded = 0;
    int64_t n_rejected = 0;   // files removed as not matching, truncated, corrupt or forged
    int64_t n_transient = 0;  // reads that failed for a reason that may pass (file kept)
};

class DiskKvCache {
public:
    // Creates the directory if needed and indexes the block files in it.
    // Throws util::InputError when it cannot be created, is not a directory
    // only this user can write, or its secret file is not right.
    DiskKvCache(const std::filesystem::path& dir, int64_t max_bytes, uint64_t model_key,
                const model::KvCacheShape& shape);
    // Finishes the queued writes.
    ~DiskKvCache();
    DiskKvCache(const DiskKvCache&) = delete;
    DiskKvCache& operator=(const DiskKvCache&) = delete;

    bool contains(const kv::BlockHash& hash) const;
    // Queues the block for writing (its bytes are copied now). Does nothing
    // when the file exists, the queue is already long or memory is short
    // (the cache is an optimisation: memory goes to requests first).
    void store(const kv::BlockHash& hash, std::span<const int32_t> tokens,
               const model::KvCacheStorage& storage, kv::BlockId block);
    // Reads the block's K/V into storage at block. False, and the file
    // removed, when it is from another model, truncated, corrupt, forged or
    // holds other tokens; false, the file kept, when it is not a regular file
    // or the read failed for a reason that may pass.
    bool load(const kv::BlockHash& hash, std::span<const int32_t> tokens,
              model::KvCacheStorage& storage, kv::BlockId block);

    // The directory's secret: the engine keys cache salts with it too, so
    // salted blocks are found again after a restart.
    const KeyedHash::Secret& secret() const { return secret_; }
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
    // Forgets the file; deletes it too when `delete_file` (it is ours and bad).
    void remove_locked(const kv::BlockHash& hash, bool delete_file = true);
    void add_locked(const kv::BlockHash& hash, int64_t bytes);
    int64_t file_bytes() const;  // of every well-formed block file

    CacheDirectory dir_;
    KeyedHash::Secret secret_;
    KvBlockCodec codec_;  // the file format (kv_block_codec.h)
    int64_t max_bytes_;

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
