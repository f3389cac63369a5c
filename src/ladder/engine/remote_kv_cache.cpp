#include "ladder/engine/remote_kv_cache.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "ladder/util/quiet_thread.h"

namespace ladder::engine {

namespace {

using Clock = std::chrono::steady_clock;

// Blocks sent to Redis in one pipeline.
constexpr size_t kWriteBatch = 16;

double seconds_now() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

Clock::time_point time_point_of(double seconds) {
    return Clock::time_point(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
}

timeval timeval_of(double seconds) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(seconds);
    tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
    return tv;
}

}  // namespace

void RemoteKvCache::ReplyDeleter::operator()(redisReply* reply) const { freeReplyObject(reply); }

void RemoteKvCache::ContextDeleter::operator()(redisContext* context) const { redisFree(context); }

namespace {

// "f16" when K and V share a type, else "q8_0-f16" (K first).
std::string types_in_key(const model::KvCacheTypes& types) {
    if (types.key == types.value) return std::string(model::kv_cache_type_name(types.key));
    return fmt::format("{}-{}", model::kv_cache_type_name(types.key),
                       model::kv_cache_type_name(types.value));
}

}  // namespace

RemoteKvCache::RemoteKvCache(const RedisAddress& address, uint64_t model_key,
                             const model::KvCacheShape& shape, const RemoteKvCacheOptions& options)
    : address_(address),
      model_key_(model_key),
      shape_(shape),
      options_(options),
      // The shape and type are in every key, so a block of another layout is
      // not even looked at; the value's header checks them again.
      key_prefix_(fmt::format("ladder:kv:v1:{:016x}:{}x{}x{}x{}:{}:", model_key, shape.n_layers,
                              shape.n_kv_heads, shape.head_dim, shape.block_size,
                              types_in_key(shape.types))),
      breaker_(options.failures_to_open, options.open_seconds) {
    Context context = connect();
    if (context) {
        breaker_.record_success();
        startup_secret_ = shared_secret_;
    }
    // The reader keeps this connection: the first lookup does not pay for one.
    reader_ = util::start_quiet_thread(
        [this, first = std::move(context)]() mutable { reader_loop(std::move(first)); });
    writer_ = util::start_quiet_thread([this] { writer_loop(); });
}

RemoteKvCache::~RemoteKvCache() {
    // The queue drains fast either way: sent, or dropped while Redis is down.
    // The batch in flight when it empties is finished before the writer stops.
    const double flush_until = seconds_now() + kFlushSeconds;
    while (n_pending_writes() > 0 && seconds_now() < flush_until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stopping_ = true;
    { const std::lock_guard lock(lookup_mutex_); }
    lookup_wake_.notify_all();
    lookup_progress_.notify_all();
    { const std::lock_guard lock(write_mutex_); }
    write_wake_.notify_all();
    reader_.join();
    writer_.join();
}

std::string RemoteKvCache::block_key(const kv::BlockHash& hash) const {
    return fmt::format("{}{:016x}{:016x}", key_prefix_, hash.high, hash.low);
}

std::string RemoteKvCache::secret_key() { return "ladder:kv:v1:secret"; }

void RemoteKvCache::count_error() {
    const std::lock_guard lock(stats_mutex_);
    ++stats_.n_errors;
}

void RemoteKvCache::count_dropped(int64_t n) {
    const std::lock_guard lock(stats_mutex_);
    stats_.n_dropped_writes += n;
}

RemoteKvCache::Context RemoteKvCache::connect() {
    Context context(redisConnectWithTimeout(address_.host.c_str(), address_.port,
                                            timeval_of(options_.connect_timeout_seconds)));
    auto failed = [&] {
        count_error();
        breaker_.record_failure(seconds_now());
        return Context();
    };
    if (!context || context->err != 0) return failed();
    if (redisSetTimeout(context.get(), timeval_of(options_.io_timeout_seconds)) != REDIS_OK)
        return failed();
    if (address_.db != 0) {
        const Reply selected(
            static_cast<redisReply*>(redisCommand(context.get(), "SELECT %d", address_.db)));
        if (!selected || selected->type == REDIS_REPLY_ERROR) return failed();
    }
    if (codec() == nullptr) {
        const std::optional<KeyedHash::Secret> secret = exchange_secret(context.get());
        if (!secret) return failed();
        const std::lock_guard lock(codec_mutex_);
        if (!codec_owner_) {
            shared_secret_ = *secret;
            codec_owner_ = std::make_unique<KvBlockCodec>(model_key_, shape_, *secret);
            codec_.store(codec_owner_.get(), std::memory_order_release);
        }
    }
    return context;
}

std::optional<KeyedHash::Secret> RemoteKvCache::exchange_secret(redisContext* context) {
    // The first replica's random secret wins; every later one reads it. Read
    // first: a Redis that is full refuses even a SET that would do nothing.
    const std::string key = secret_key();
    for (int attempt = 0; attempt < 2; ++attempt) {
        const Reply got(
            static_cast<redisReply*>(redisCommand(context, "GET %b", key.data(), key.size())));
        if (!got || (got->type != REDIS_REPLY_STRING && got->type != REDIS_REPLY_NIL))
            return std::nullopt;
        if (got->type == REDIS_REPLY_STRING) {
            KeyedHash::Secret secret{};
            if (got->len != secret.size()) return std::nullopt;  // not ours: never overwritten
            std::memcpy(secret.data(), got->str, secret.size());
            return secret;
        }
        const KeyedHash::Secret fresh = KeyedHash::random_secret();
        const Reply set(static_cast<redisReply*>(redisCommand(
            context, "SET %b %b NX", key.data(), key.size(), fresh.data(), fresh.size())));
        if (!set || set->type == REDIS_REPLY_ERROR) return std::nullopt;
    }
    return std::nullopt;
}

void RemoteKvCache::store(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                          const model::KvCacheStorage& storage, kv::BlockId block) {
    const KvBlockCodec* block_codec = codec();
    // No secret yet (Redis has not answered) or a breaker open: not kept.
    if (block_codec == nullptr || breaker_.is_open(seconds_now())) {
        count_dropped(1);
        return;
    }
    {
        const std::lock_guard lock(write_mutex_);
        if (queued_bytes_ + block_codec->encoded_bytes() > options_.max_queued_bytes) {
            count_dropped(1);
            return;
        }
    }
    PendingWrite write;
    try {
        write = {block_key(hash), block_codec->encode(hash, tokens, storage, block)};
    } catch (const std::bad_alloc&) {
        count_dropped(1);  // memory goes to requests first
        return;
    }
    {
        const std::lock_guard lock(write_mutex_);
        queued_bytes_ += static_cast<int64_t>(write.bytes.size());
        write_queue_.push_back(std::move(write));
    }
    write_wake_.notify_one();
}

void RemoteKvCache::writer_loop() {
    Context context;
    while (true) {
        std::vector<PendingWrite> writes;
        {
            std::unique_lock lock(write_mutex_);
            write_wake_.wait(lock, [&] { return stopping_ || !write_queue_.empty(); });
            if (stopping_) return;
            while (!write_queue_.empty() && writes.size() < kWriteBatch) {
                queued_bytes_ -= static_cast<int64_t>(write_queue_.front().bytes.size());
                writes.push_back(std::move(write_queue_.front()));
                write_queue_.pop_front();
            }
        }
        if (!context && breaker_.allow(seconds_now())) context = connect();
        if (!context) {
            count_dropped(static_cast<int64_t>(writes.size()));
            continue;
        }
        send_writes(writes, context);
    }
}

void RemoteKvCache::send_writes(std::vector<PendingWrite>& writes, Context& context) {
    redisContext* c = context.get();
    for (const PendingWrite& write : writes) {
        redisAppendCommand(c, "SET %b %b", write.key.data(), write.key.size(), write.bytes.data(),
                           write.bytes.size());
    }
    // Set again with every batch (only where missing), so an LRU that evicted
    // the secret does not leave the next replica to make another.
    const std::string key = secret_key();
    redisAppendCommand(c, "SET %b %b NX", key.data(), key.size(), shared_secret_.data(),
                       shared_secret_.size());
    int64_t n_written = 0;
    int64_t n_bytes = 0;
    int64_t n_failed = 0;
    for (size_t i = 0; i <= writes.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK) {
            // The connection broke: what was not answered is lost.
            context.reset();
            n_failed += static_cast<int64_t>(writes.size() - std::min(i, writes.size()));
            break;
        }
        const Reply reply(static_cast<redisReply*>(raw));
        if (i == writes.size()) break;  // the secret's
        if (reply->type == REDIS_REPLY_ERROR) {
            ++n_failed;  // full (maxmemory without eviction), or refused
        } else {
            ++n_written;
            n_bytes += static_cast<int64_t>(writes[i].bytes.size());
        }
    }
    {
        const std::lock_guard lock(stats_mutex_);
        stats_.n_written_blocks += n_written;
        stats_.n_bytes_written += n_bytes;
        stats_.n_dropped_writes += n_failed;
        if (n_failed > 0) ++stats_.n_errors;
    }
    if (n_failed > 0) {
        breaker_.record_failure(seconds_now());
    } else {
        breaker_.record_success();
    }
}

void RemoteKvCache::begin_lookup(std::span<const kv::BlockHash> hashes) {
    end_lookup();
    if (hashes.empty()) return;
    {
        // The reader is still draining an earlier lookup: these are misses
        // rather than a wait.
        const std::lock_guard lock(lookup_mutex_);
        if (reader_busy_ || next_lookup_) return;
    }
    const double now = seconds_now();
    if (!breaker_.allow(now)) return;
    auto lookup = std::make_shared<Lookup>();
    lookup->keys.reserve(hashes.size());
    for (size_t i = 0; i < hashes.size(); ++i) {
        lookup->keys.push_back(block_key(hashes[i]));
        lookup_index_.emplace(hashes[i], i);
    }
    lookup->replies.resize(hashes.size());
    lookup->started = now;
    {
        const std::lock_guard lock(lookup_mutex_);
        next_lookup_ = lookup;
    }
    lookup_wake_.notify_one();
    lookup_ = std::move(lookup);
}

void RemoteKvCache::end_lookup() {
    if (lookup_) {
        const std::lock_guard lock(lookup_mutex_);
        lookup_->cancelled = true;
    }
    lookup_.reset();
    lookup_index_.clear();
}

bool RemoteKvCache::load(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                         model::KvCacheStorage& storage, kv::BlockId block) {
    if (!lookup_) return false;
    const auto it = lookup_index_.find(hash);
    if (it == lookup_index_.end()) return false;
    const size_t index = it->second;
    const size_t batch = index / static_cast<size_t>(options_.blocks_per_batch);
    const double deadline =
        lookup_->started + static_cast<double>(batch + 1) * options_.read_deadline_seconds;
    Reply reply;
    {
        std::unique_lock lock(lookup_mutex_);
        Lookup& lookup = *lookup_;
        const bool in_time = lookup_progress_.wait_until(lock, time_point_of(deadline), [&] {
            return lookup.n_arrived > index || lookup.ended || stopping_;
        });
        if (!in_time) {
            // Slow: the rest of the prompt is computed, and the breaker told.
            lookup.cancelled = true;
            lookup.timed_out = true;
            lock.unlock();
            {
                const std::lock_guard stats_lock(stats_mutex_);
                ++stats_.n_timeouts;
                ++stats_.n_errors;
            }
            breaker_.record_failure(seconds_now());
            end_lookup();
            return false;
        }
        if (lookup.n_arrived <= index) return false;  // not in Redis, or the reader failed
        reply = std::move(lookup.replies[index]);
    }
    const KvBlockCodec* block_codec = codec();
    const bool loaded =
        block_codec != nullptr &&
        block_codec->decode({reinterpret_cast<const uint8_t*>(reply->str), reply->len}, hash,
                            tokens, storage, block);
    const std::lock_guard lock(stats_mutex_);
    ++(loaded ? stats_.n_hit_blocks : stats_.n_rejected_blocks);
    return loaded;
}

void RemoteKvCache::reader_loop(Context context) {
    while (true) {
        std::shared_ptr<Lookup> lookup;
        {
            std::unique_lock lock(lookup_mutex_);
            lookup_wake_.wait(lock, [&] { return stopping_ || next_lookup_ != nullptr; });
            if (stopping_) return;
            lookup = std::move(next_lookup_);
            reader_busy_ = true;
        }
        if (!context) context = connect();
        if (context) fetch(*lookup, context);
        {
            const std::lock_guard lock(lookup_mutex_);
            lookup->ended = true;
            reader_busy_ = false;
        }
        lookup_progress_.notify_all();
    }
}

void RemoteKvCache::fetch(Lookup& lookup, Context& context) {
    redisContext* c = context.get();
    const size_t n = lookup.keys.size();
    // Two batches in flight: the next one is on its way while the engine
    // loads this one, and a cancelled lookup leaves little to drain.
    const size_t window = 2 * static_cast<size_t>(options_.blocks_per_batch);
    size_t n_sent = 0;
    size_t n_received = 0;
    bool stop_sending = false;
    bool failed = false;
    while (n_received < n_sent || (!stop_sending && n_sent < n)) {
        while (!stop_sending && n_sent < n && n_sent - n_received < window) {
            const std::string& key = lookup.keys[n_sent];
            redisAppendCommand(c, "GET %b", key.data(), key.size());
            ++n_sent;
        }
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK) {
            context.reset();
            count_error();
            breaker_.record_failure(seconds_now());
            return;
        }
        Reply reply(static_cast<redisReply*>(raw));
        const size_t index = n_received++;
        const bool found = reply->type == REDIS_REPLY_STRING;
        if (reply->type == REDIS_REPLY_ERROR) failed = true;
        {
            const std::lock_guard lock(lookup_mutex_);
            if (!found) lookup.ended = true;  // the chain breaks here: nothing after it is used
            if (!lookup.ended && !lookup.cancelled && index == lookup.n_arrived) {
                lookup.replies[index] = std::move(reply);
                ++lookup.n_arrived;
            }
            stop_sending = lookup.ended || lookup.cancelled || stopping_;
        }
        lookup_progress_.notify_all();
    }
    if (failed) {
        count_error();
        breaker_.record_failure(seconds_now());
        return;
    }
    bool timed_out = false;
    {
        const std::lock_guard lock(lookup_mutex_);
        timed_out = lookup.timed_out;
    }
    // A late answer is no success: a Redis that is always late must open the breaker.
    if (!timed_out) breaker_.record_success();
}

RemoteKvCacheStats RemoteKvCache::stats() const {
    RemoteKvCacheStats stats;
    {
        const std::lock_guard lock(stats_mutex_);
        stats = stats_;
    }
    stats.n_breaker_opened = breaker_.n_opened();
    stats.breaker_open = breaker_.is_open(seconds_now());
    return stats;
}

int64_t RemoteKvCache::n_pending_writes() const {
    const std::lock_guard lock(write_mutex_);
    return static_cast<int64_t>(write_queue_.size());
}

}  // namespace ladder::engine
