// A read-only memory map of a whole file. Model weights are viewed in place,
// never copied; the map lives as long as this object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ladder::util {

// Which file, in which version: equal stamps mean the same bytes unless the
// file was rewritten in place within one mtime tick at the same size.
struct FileStamp {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t size_bytes = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
};

class MappedFile {
public:
    // Throws InputError naming the path when it cannot be opened or mapped.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const uint8_t> bytes() const { return {data_, size_bytes_}; }
    const std::string& path() const { return path_; }
    // Of the file that was mapped (fstat of the descriptor, not the path later).
    const FileStamp& stamp() const { return stamp_; }

private:
    std::string path_;
    FileStamp stamp_;
    const uint8_t* data_ = nullptr;
    size_t size_bytes_ = 0;
};

}  // namespace ladder::util
