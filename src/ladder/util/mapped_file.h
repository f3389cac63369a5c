// A read-only memory map of a whole file. Model weights are viewed in place,
// never copied; the map lives as long as this object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ladder::util {

class MappedFile {
public:
    // Throws InputError naming the path when it cannot be opened or mapped.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const uint8_t> bytes() const { return {data_, size_bytes_}; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    const uint8_t* data_ = nullptr;
    size_t size_bytes_ = 0;
};

}  // namespace ladder::util
