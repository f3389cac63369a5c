#include "ladder/engine/disk_kv_cache.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "ladder/util/error.h"

namespace ladder::engine {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'L', 'D', 'K', 'V', 'B', 'L', 'K', '1'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kDtypeF16 = 1;
constexpr const char* kExtension = ".kvb";
// Writes waiting beyond this many bytes are dropped: the cache is an
// optimisation and must not hold the server's memory hostage to a slow disk.
constexpr int64_t kMaxQueuedBytes = int64_t{256} << 20;

struct FileHeader {
    char magic[8];
    uint32_t version;
    uint32_t dtype;
    uint64_t model_key;
    uint32_t n_layers;
    uint32_t n_kv_heads;
    uint32_t head_dim;
    uint32_t block_size;
    uint64_t hash_low;
    uint64_t hash_high;
    uint64_t payload_bytes;  // token ids and K/V after the header
    uint64_t checksum;       // XXH3-64 of those bytes
};
static_assert(sizeof(FileHeader) == 72);

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
    : dir_(dir),
      max_bytes_(max_bytes),
      model_key_(model_key),
      shape_(shape),
      payload_bytes_(shape.bytes_per_token() * shape.block_size) {
    std::error_code error;
    fs::create_directories(dir_, error);
    if (error || !fs::is_directory(dir_)) {
        util::fail("--kv-disk-cache: cannot use '{}' as a directory: {}", dir_.string(),
                   error ? error.message() : "not a directory");
    }
    if (max_bytes_ <= 0) util::fail("--kv-disk-cache-size must be positive");
    index_directory();
    writer_ = std::thread([this] { writer_loop(); });
}

DiskKvCache::~DiskKvCache() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    writer_.join();
}

fs::path DiskKvCache::path_of(const kv::BlockHash& hash) const { return dir_ / hex_name(hash); }

int64_t DiskKvCache::layer_block_bytes() const {
    return static_cast<int64_t>(shape_.n_kv_heads) * shape_.block_size * shape_.head_dim *
           static_cast<int64_t>(sizeof(uint16_t));
}

int64_t DiskKvCache::file_bytes() const {
    return static_cast<int64_t>(sizeof(FileHeader)) +
           static_cast<int64_t>(shape_.block_size) * static_cast<int64_t>(sizeof(int32_t)) +
           payload_bytes_;
}

void DiskKvCache::index_directory() {
    struct Found {
        kv::BlockHash hash;
        int64_t bytes;
        fs::file_time_type time;
    };
    std::vector<Found> found;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
        const std::string name = entry.path().filename().string();
        if (name.ends_with(".tmp")) {
            fs::remove(entry.path(), error);  // a write cut short by a crash
            continue;
        }
        const std::optional<kv::BlockHash> hash = parse_name(name);
        if (!hash || !entry.is_regular_file(error)) continue;  // not ours: left alone
        const auto bytes = static_cast<int64_t>(entry.file_size(error));
        if (bytes != file_bytes()) {
            // Truncated, or written for another shape: checking the size costs
            // nothing now; the content is checked when a block is read.
            fs::remove(entry.path(), error);
            ++stats_.n_rejected;
            continue;
        }
        found.push_back({*hash, bytes, entry.last_write_time(error)});
    }
    std::sort(found.begin(), found.end(),
              [](const Found& a, const Found& b) { return a.time < b.time; });
    const std::lock_guard lock(mutex_);
    for (const Found& f : found) add_locked(f.hash, f.bytes);
    enforce_limit_locked();
}

void DiskKvCache::add_locked(const kv::BlockHash& hash, int64_t bytes) {
    if (files_.contains(hash)) return;
    oldest_first_.push_back(hash);
    files_.emplace(hash, Entry{bytes, std::prev(oldest_first_.end())});
    ++stats_.n_files;
    stats_.n_bytes += bytes;
}

void DiskKvCache::remove_locked(const kv::BlockHash& hash) {
    const auto it = files_.find(hash);
    if (it == files_.end()) return;
    std::error_code error;
    fs::remove(path_of(hash), error);
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

std::vector<uint8_t> DiskKvCache::encode(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                                         const model::KvCacheStorage& storage,
                                         kv::BlockId block) const {
    const size_t token_bytes = tokens.size_bytes();
    const auto chunk = static_cast<size_t>(layer_block_bytes());
    std::vector<uint8_t> bytes(sizeof(FileHeader) + token_bytes +
                               static_cast<size_t>(payload_bytes_));
    uint8_t* payload = bytes.data() + sizeof(FileHeader);
    std::memcpy(payload, tokens.data(), token_bytes);
    uint8_t* at = payload + token_bytes;
    for (int32_t layer = 0; layer < shape_.n_layers; ++layer) {
        std::memcpy(at, storage.keys(layer, block, 0), chunk);
        std::memcpy(at + chunk, storage.values(layer, block, 0), chunk);
        at += 2 * chunk;
    }
    FileHeader header{};
    std::memcpy(header.magic, kMagic, sizeof(kMagic));
    header.version = kVersion;
    header.dtype = kDtypeF16;
    header.model_key = model_key_;
    header.n_layers = static_cast<uint32_t>(shape_.n_layers);
    header.n_kv_heads = static_cast<uint32_t>(shape_.n_kv_heads);
    header.head_dim = static_cast<uint32_t>(shape_.head_dim);
    header.block_size = static_cast<uint32_t>(shape_.block_size);
    header.hash_low = hash.low;
    header.hash_high = hash.high;
    header.payload_bytes = token_bytes + static_cast<uint64_t>(payload_bytes_);
    header.checksum = XXH3_64bits(payload, header.payload_bytes);
    std::memcpy(bytes.data(), &header, sizeof(header));
    return bytes;
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
    PendingWrite write{hash, encode(hash, tokens, storage, block)};
    {
        const std::lock_guard lock(mutex_);
        queue_.push_back(std::move(write));
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
    // Written under a temporary name and renamed: a reader never sees half a file.
    const fs::path path = path_of(write.hash);
    fs::path temporary = path;
    temporary += ".tmp";
    bool ok = false;
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(write.file_bytes.data()),
                  static_cast<std::streamsize>(write.file_bytes.size()));
        ok = static_cast<bool>(out);
    }
    std::error_code error;
    if (ok) fs::rename(temporary, path, error);
    if (!ok || error) fs::remove(temporary, error);  // a full disk: the block is simply not kept
    const std::lock_guard lock(mutex_);
    queued_.erase(write.hash);
    if (ok && !error) {
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
    auto reject = [&] {
        const std::lock_guard lock(mutex_);
        remove_locked(hash);
        ++stats_.n_rejected;
        return false;
    };
    std::ifstream in(path_of(hash), std::ios::binary);
    FileHeader header{};
    if (!in.read(reinterpret_cast<char*>(&header), sizeof(header))) return reject();
    const uint64_t expected_payload = tokens.size_bytes() + static_cast<uint64_t>(payload_bytes_);
    const bool matches = std::memcmp(header.magic, kMagic, sizeof(kMagic)) == 0 &&
                         header.version == kVersion && header.dtype == kDtypeF16 &&
                         header.model_key == model_key_ &&
                         header.n_layers == static_cast<uint32_t>(shape_.n_layers) &&
                         header.n_kv_heads == static_cast<uint32_t>(shape_.n_kv_heads) &&
                         header.head_dim == static_cast<uint32_t>(shape_.head_dim) &&
                         header.block_size == static_cast<uint32_t>(shape_.block_size) &&
                         header.hash_low == hash.low && header.hash_high == hash.high &&
                         header.payload_bytes == expected_payload;
    if (!matches) return reject();
    std::vector<uint8_t> payload(expected_payload);
    if (!in.read(reinterpret_cast<char*>(payload.data()),
                 static_cast<std::streamsize>(payload.size())) ||
        in.peek() != std::char_traits<char>::eof()) {
        return reject();  // truncated, or longer than it says
    }
    if (XXH3_64bits(payload.data(), payload.size()) != header.checksum) return reject();
    if (std::memcmp(payload.data(), tokens.data(), tokens.size_bytes()) != 0) return reject();

    const auto chunk = static_cast<size_t>(layer_block_bytes());
    const uint8_t* at = payload.data() + tokens.size_bytes();
    for (int32_t layer = 0; layer < shape_.n_layers; ++layer) {
        std::memcpy(storage.keys(layer, block, 0), at, chunk);
        std::memcpy(storage.values(layer, block, 0), at + chunk, chunk);
        at += 2 * chunk;
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
