// The prefix cache's remote tier: full KV blocks shared between replicas
// through Redis (`--kv-remote redis://HOST:PORT[/DB]`), so a replica reuses
// prefixes another one computed, and a restarted one starts warm.
//
// A block's key names the model's identity, the KV shape and type, and the
// block's chain hash (which carries the request's cache salt); its value is
// the disk tier's block format (kv_block_codec.h), checksummed with a secret
// the replicas share through the same Redis. A value that is not right is a
// miss, never a load. Eviction is Redis's own (maxmemory, allkeys-lru).
//
// The engine thread never touches a socket. Writes: store() copies the block
// into a bounded queue that a writer thread sends (a full queue drops the
// write, and counts it). Reads: begin_lookup() hands the blocks a prompt
// lacks to a reader thread, which pipelines GETs; load() waits for a block at
// most until its batch's deadline, and a late or failed block is a miss
// (the engine computes it). After repeated errors a circuit breaker stops
// asking for a while, so a Redis that is down, slow or full costs a request
// nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ladder/engine/circuit_breaker.h"
#include "ladder/engine/keyed_hash.h"
#include "ladder/engine/kv_block_codec.h"
#include "ladder/engine/redis_address.h"
#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_pool.h"
#include "ladder/model/kv_cache_storage.h"

struct redisContext;
struct redisReply;

namespace ladder::engine {

struct RemoteKvCacheOptions {
    // A lookup's i-th batch of blocks must have arrived by
    // start + (i + 1) * read_deadline_seconds, or it and the rest are misses.
    // Computing 4 blocks (64 tokens) takes a CPU tens to hundreds of
    // milliseconds, so waiting this long for them is the better bet.
    double read_deadline_seconds = 0.020;
    int32_t blocks_per_batch = 4;
    // Blocks waiting to be written beyond this many bytes are dropped.
    int64_t max_queued_bytes = int64_t{256} << 20;
    double connect_timeout_seconds = 0.2;
    double io_timeout_seconds = 1.0;  // of one socket read or write on the tier's threads
    int32_t failures_to_open = 3;     // errors in a row that open the breaker
    double open_seconds = 5.0;        // how long it then stays open
};

struct RemoteKvCacheStats {
    int64_t n_hit_blocks = 0;       // blocks loaded from Redis
    int64_t n_rejected_blocks = 0;  // values that were not this block (model, shape, checksum)
    int64_t n_errors = 0;           // failed connections and commands, late reads
    int64_t n_timeouts = 0;         // of which reads past their deadline
    int64_t n_written_blocks = 0;
    int64_t n_bytes_written = 0;
    int64_t n_dropped_writes = 0;  // not written: queue full, breaker open or a failed write
    int64_t n_breaker_opened = 0;
    bool breaker_open = false;
};

class RemoteKvCache {
public:
    // Connects once (bounded by options.connect_timeout_seconds) to fetch or
    // create the shared secret; a Redis that is not there is not an error
    // (the threads keep trying, behind the breaker).
    RemoteKvCache(const RedisAddress& address, uint64_t model_key, const model::KvCacheShape& shape,
                  const RemoteKvCacheOptions& options = {});
    // Sends what is queued first, for at most kFlushSeconds (a replica that is
    // replaced leaves its blocks to the others), then stops the threads.
    ~RemoteKvCache();
    static constexpr double kFlushSeconds = 2.0;
    RemoteKvCache(const RemoteKvCache&) = delete;
    RemoteKvCache& operator=(const RemoteKvCache&) = delete;

    // The secret the replicas share, when Redis answered at construction:
    // the engine keys cache salts with it so salted blocks match across
    // replicas. nullopt otherwise.
    const std::optional<KeyedHash::Secret>& startup_secret() const { return startup_secret_; }

    // Queues the block for writing (its bytes copied now).
    void store(const kv::BlockHash& hash, std::span<const int32_t> tokens,
               const model::KvCacheStorage& storage, kv::BlockId block);
    // Starts fetching these blocks, a prompt's next ones in order (the first
    // is the first that memory lacks). Replaces the lookup before it.
    void begin_lookup(std::span<const kv::BlockHash> hashes);
    // Reads the block into storage at block, waiting at most until its
    // batch's deadline. False when it is not in Redis, not right, late, or
    // not part of the lookup.
    bool load(const kv::BlockHash& hash, std::span<const int32_t> tokens,
              model::KvCacheStorage& storage, kv::BlockId block);
    // The admission is done with the lookup: the reader stops fetching.
    void end_lookup();

    RemoteKvCacheStats stats() const;
    // Blocks queued for writing and not sent yet.
    int64_t n_pending_writes() const;
    // Redis's key of a block.
    std::string block_key(const kv::BlockHash& hash) const;

private:
    struct ReplyDeleter {
        void operator()(redisReply* reply) const;
    };
    using Reply = std::unique_ptr<redisReply, ReplyDeleter>;
    struct ContextDeleter {
        void operator()(redisContext* context) const;
    };
    using Context = std::unique_ptr<redisContext, ContextDeleter>;

    // One admission's blocks, shared by the engine and the reader thread
    // (under lookup_mutex_).
    struct Lookup {
        std::vector<std::string> keys;
        std::vector<Reply> replies;  // [0, n_arrived) filled
        size_t n_arrived = 0;
        bool ended = false;      // nothing more comes (a miss, an error, or cancelled)
        bool cancelled = false;  // the engine is done with it
        bool timed_out = false;  // the engine gave up waiting
        double started = 0.0;
    };
    struct PendingWrite {
        std::string key;
        std::vector<uint8_t> bytes;
    };

    // A connection with the database selected and the secret known; null
    // (and the breaker told) when Redis did not answer.
    Context connect();
    // Fetches the shared secret, creating it if no replica has yet.
    std::optional<KeyedHash::Secret> exchange_secret(redisContext* context);
    void reader_loop(Context context);
    void fetch(Lookup& lookup, Context& context);
    void writer_loop();
    void send_writes(std::vector<PendingWrite>& writes, Context& context);
    void count_error();
    void count_dropped(int64_t n);
    static std::string secret_key();
    const KvBlockCodec* codec() const { return codec_.load(std::memory_order_acquire); }

    const RedisAddress address_;
    const uint64_t model_key_;
    const model::KvCacheShape shape_;
    const RemoteKvCacheOptions options_;
    const std::string key_prefix_;
    CircuitBreaker breaker_;
    std::optional<KeyedHash::Secret> startup_secret_;

    std::mutex codec_mutex_;
    std::unique_ptr<KvBlockCodec> codec_owner_;  // set once, when the secret is known
    KeyedHash::Secret shared_secret_{};          // written before codec_ is published
    std::atomic<const KvBlockCodec*> codec_{nullptr};

    mutable std::mutex stats_mutex_;
    RemoteKvCacheStats stats_;

    // The engine's side of the current lookup.
    std::shared_ptr<Lookup> lookup_;
    std::unordered_map<kv::BlockHash, size_t, kv::BlockHashHasher> lookup_index_;

    std::mutex lookup_mutex_;
    std::condition_variable lookup_wake_;      // the reader: work, or stop
    std::condition_variable lookup_progress_;  // the engine: a reply arrived
    std::shared_ptr<Lookup> next_lookup_;      // handed over, not picked up yet
    bool reader_busy_ = false;

    mutable std::mutex write_mutex_;
    std::condition_variable write_wake_;
    std::deque<PendingWrite> write_queue_;
    int64_t queued_bytes_ = 0;

    std::atomic<bool> stopping_{false};
    std::thread reader_;  // last: they start after everything above exists
    std::thread writer_;
};

}  // namespace ladder::engine
