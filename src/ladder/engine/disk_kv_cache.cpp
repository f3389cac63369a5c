#include "ladder/engine/disk_kv_cache.h"

#include <algorithm>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "ladder/util/error.h"
#include "ladder/util/quiet_thread.h"

namespace ladder::engine {

namespace {

namespace fs = std::filesystem;

constexpr const char* kExtension = ".kvb";
// Writes waiting beyond this many bytes are dropped: the cache is an
// optimisation and must not hold the server's memory hostage to a slow disk.
constexpr int64_t kMaxQueuedBytes = int64_t{256} << 20;

std::string hex_name(const kv::BlockHash& hash) {
    return fmt::format("{:016x}{:016x}{}", hash.high, hash.low, kExtension);
}

// The hash a file name spells, or nullopt for a name that is not ours.
std::optional<kv::BlockHash> parse_name(const std::string& name) {
    if (name.size() != 32 + std::strlen(kExtension) || !name.ends_with(kExtension))
        return std::nullopt;
    kv::BlockHash hash;
    for (int i = 0; i < 32; ++i) {
        const char c = name[static_cast<size_t>(i)];
        int digit = 0;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else {
            return std::nullopt;
        }
        uint64_t& half = i < 16 ? hash.high : hash.low;
        half = (half << 4) | static_cast<uint64_t>(digit);
    }
    return hash;
}

}  // namespace

DiskKvCache::DiskKvCache(const fs::path& dir, int64_t max_bytes, uint64_t model_key,
                         const model::KvCacheShape& shape)
    : dir_(dir, "--kv-disk-cache"),
      secret_(dir_.secret()),
      codec_(model_key, shape, secret_),
      max_bytes_(max_bytes) {
    if (max_bytes_ <= 0) util::fail("--kv-disk-cache-size must be positive");
    index_directory();
    writer_ = util::start_quiet_thread([this] { writer_loop(); });
}

DiskKvCache::~DiskKvCache() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    writer_.join();
}

int64_t DiskKvCache::file_bytes() const { return codec_.encoded_bytes(); }

void DiskKvCache::index_directory() {
    std::vector<CacheDirectory::Entry> found;
    for (CacheDirectory::Entry& entry : dir_.regular_files()) {
        // Not named like a block (temporary files of any process included):
        // not ours to touch.
        if (!parse_name(entry.name)) continue;
        if (entry.size_bytes != file_bytes()) {
            // Truncated, or written for another shape: checking the size costs
            // nothing now; the content is checked when a block is read.
            dir_.remove(entry.name);
            ++stats_.n_rejected;
            continue;
        }
        found.push_back(std::move(entry));
    }
    std::sort(found.begin(), found.end(),
              [](const CacheDirectory::Entry& a, const CacheDirectory::Entry& b) {
                  return a.mtime_ns < b.mtime_ns;
              });
    const std::lock_guard lock(mutex_);
    for (const CacheDirectory::Entry& f : found) add_locked(*parse_name(f.name), f.size_bytes);
    enforce_limit_locked();
}

void DiskKvCache::add_locked(const kv::BlockHash& hash, int64_t bytes) {
    if (files_.contains(hash)) return;
    oldest_first_.push_back(hash);
    files_.emplace(hash, Entry{bytes, std::prev(oldest_first_.end())});
    ++stats_.n_files;
    stats_.n_bytes += bytes;
}

void DiskKvCache::remove_locked(const kv::BlockHash& hash, bool delete_file) {
    const auto it = files_.find(hash);
    if (it == files_.end()) return;
    if (delete_file) dir_.remove(hex_name(hash));
    stats_.n_bytes -= it->second.bytes;
    --stats_.n_files;
    oldest_first_.erase(it->second.age);
    files_.erase(it);
}

void DiskKvCache::enforce_limit_locked() {
    while (stats_.n_bytes > max_bytes_ && !oldest_first_.empty()) {
        remove_locked(oldest_first_.front());
    }
}

bool DiskKvCache::contains(const kv::BlockHash& hash) const {
    const std::lock_guard lock(mutex_);
    return files_.contains(hash);
}

void DiskKvCache::store(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                        const model::KvCacheStorage& storage, kv::BlockId block) {
    {
        const std::lock_guard lock(mutex_);
        const int64_t queued_bytes = static_cast<int64_t>(queue_.size()) * file_bytes();
        if (files_.contains(hash) || queued_.contains(hash) || queued_bytes >= kMaxQueuedBytes)
            return;
        queued_.insert(hash);
    }
    try {
        PendingWrite write{hash, codec_.encode(hash, tokens, storage, block)};
        const std::lock_guard lock(mutex_);
        queue_.push_back(std::move(write));
    } catch (const std::bad_alloc&) {
        const std::lock_guard lock(mutex_);
        queued_.erase(hash);  // not kept: the block is simply not on disk
        return;
    }
    wake_.notify_one();
}

void DiskKvCache::writer_loop() {
    while (true) {
        PendingWrite write;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and every queued write done
            write = std::move(queue_.front());
            queue_.pop_front();
        }
        write_file(write);
    }
}

void DiskKvCache::write_file(const PendingWrite& write) {
    // A full disk: the block is simply not kept.
    const bool ok = dir_.write_atomically(hex_name(write.hash), write.file_bytes);
    const std::lock_guard lock(mutex_);
    queued_.erase(write.hash);
    if (ok) {
        add_locked(write.hash, static_cast<int64_t>(write.file_bytes.size()));
        ++stats_.n_written;
        enforce_limit_locked();
    }
}

bool DiskKvCache::load(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                       model::KvCacheStorage& storage, kv::BlockId block) {
    {
        const std::lock_guard lock(mutex_);
        if (!files_.contains(hash)) return false;
    }
    const FileRead read = dir_.read(hex_name(hash), static_cast<size_t>(file_bytes()));
    switch (read.status) {
        case FileStatus::Ok:
            break;
        case FileStatus::Transient: {
            const std::lock_guard lock(mutex_);
            ++stats_.n_transient;
            return false;  // kept, and tried again at the next hit
        }
        case FileStatus::Missing:
        case FileStatus::NotRegular:
        case FileStatus::Unreadable: {
            // Gone, or replaced by something that is not our file: forgotten,
            // and not touched.
            const std::lock_guard lock(mutex_);
            remove_locked(hash, /*delete_file=*/false);
            return false;
        }
        case FileStatus::WrongSize:
            break;  // ours, cut short or grown: rejected below
    }
    if (read.status != FileStatus::Ok || !codec_.decode(read.bytes, hash, tokens, storage, block)) {
        const std::lock_guard lock(mutex_);
        remove_locked(hash);
        ++stats_.n_rejected;
        return false;
    }
    const std::lock_guard lock(mutex_);
    ++stats_.n_loaded;
    // A block read is a block used: it moves to the young end.
    const auto it = files_.find(hash);
    if (it != files_.end())
        oldest_first_.splice(oldest_first_.end(), oldest_first_, it->second.age);
    return true;
}

DiskKvCacheStats DiskKvCache::stats() const {
    const std::lock_guard lock(mutex_);
    return stats_;
}

int64_t DiskKvCache::n_pending_writes() const {
    const std::lock_guard lock(mutex_);
    return static_cast<int64_t>(queued_.size());
}

}  // namespace ladder::engine
