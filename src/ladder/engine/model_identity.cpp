#include "ladder/engine/model_identity.h"

#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ladder/engine/cache_directory.h"
#include "ladder/gguf/gguf_file.h"

namespace ladder::engine {

namespace {

constexpr const char* kRecordName = "model-identities";
constexpr size_t kMaxRecordBytes = 64 * 1024;
constexpr size_t kMaxRecords = 64;  // the newest kept: one line per model file used here

struct Record {
    util::FileStamp stamp;
    uint64_t identity = 0;
};

// One record per line: "device inode size mtime_ns identity", the identity
// in hex. Lines that do not parse are dropped.
std::vector<Record> parse_records(std::span<const uint8_t> bytes) {
    std::vector<Record> records;
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    for (std::string line; std::getline(in, line);) {
        Record r;
        unsigned long long device = 0, inode = 0, identity = 0;
        long long size = 0, mtime = 0;
        if (std::sscanf(line.c_str(), "%llu %llu %lld %lld %llx", &device, &inode, &size, &mtime,
                        &identity) == 5) {
            r.stamp = {device, inode, size, mtime};
            r.identity = identity;
            records.push_back(r);
        }
    }
    return records;
}

std::string format_records(const std::vector<Record>& records) {
    std::string text;
    for (const Record& r : records) {
        text += fmt::format("{} {} {} {} {:016x}\n", r.stamp.device, r.stamp.inode,
                            r.stamp.size_bytes, r.stamp.mtime_ns, r.identity);
    }
    return text;
}

}  // namespace

uint64_t model_identity(const gguf::GgufFile& file) {
    const std::span<const uint8_t> bytes = file.bytes();
    return XXH3_64bits(bytes.data(), bytes.size());
}

uint64_t cached_model_identity(const gguf::GgufFile& file, const CacheDirectory& dir) {
    const std::optional<util::FileStamp> stamp = file.stamp();
    if (!stamp) return model_identity(file);
    const FileRead read = dir.read(kRecordName, 0, kMaxRecordBytes);
    std::vector<Record> records =
        read.status == FileStatus::Ok ? parse_records(read.bytes) : std::vector<Record>{};
    for (const Record& r : records) {
        if (r.stamp == *stamp) return r.identity;
    }
    const uint64_t identity = model_identity(file);
    records.push_back({*stamp, identity});
    if (records.size() > kMaxRecords)
        records.erase(records.begin(), records.end() - static_cast<ptrdiff_t>(kMaxRecords));
    // Another process may write it at the same time: the last one wins, and
    // whatever is lost is hashed again next time.
    if (read.status != FileStatus::NotRegular) {
        const std::string text = format_records(records);
        dir.write_atomically(kRecordName,
                             {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
    }
    return identity;
}

}  // namespace ladder::engine
