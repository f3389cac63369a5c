// Bounds-checked little-endian reads over an untrusted byte span. Every read
// checks the remaining length first, so a truncated file is an InputError,
// never an out-of-bounds read. Knows nothing of GGUF's structure.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "ladder/util/error.h"

namespace ladder::gguf {

static_assert(std::endian::native == std::endian::little,
              "GGUF fields are read by memcpy, which assumes a little-endian host");

class ByteReader {
public:
    ByteReader(std::span<const uint8_t> bytes, const std::string& file_name)
        : bytes_(bytes), file_name_(file_name) {}

    uint64_t position() const { return position_; }
    uint64_t size() const { return bytes_.size(); }
    uint64_t remaining() const { return bytes_.size() - position_; }

    // What is being read, for messages ("metadata key 'general.name'"). Set once
    // per entry by the caller, so per-element reads do not build strings.
    void set_context(std::string context) { context_ = std::move(context); }
    const std::string& context() const { return context_; }

    template <typename T>
    T read(const char* what) {
        require(sizeof(T), what);
        T value;
        // memcpy: the file gives no alignment guarantee for these fields.
        std::memcpy(&value, bytes_.data() + position_, sizeof(T));
        position_ += sizeof(T);
        return value;
    }

    // A view of the next n_bytes; valid as long as the underlying bytes.
    std::string_view read_bytes(uint64_t n_bytes, const char* what) {
        require(n_bytes, what);
        const auto* start = reinterpret_cast<const char*>(bytes_.data() + position_);
        position_ += n_bytes;
        return {start, static_cast<size_t>(n_bytes)};
    }

    // A GGUF string: uint64 length, then that many bytes (no terminator).
    std::string_view read_string(const char* what) {
        const auto length = read<uint64_t>(what);
        if (length > remaining()) {
            util::fail("{}: {} of {} claims {} bytes at byte {}, but only {} bytes remain",
                       file_name_, what, context_, length, position_, remaining());
        }
        return read_bytes(length, what);
    }

    [[noreturn]] void fail_truncated(uint64_t n_bytes, const char* what) const {
        util::fail("{}: file ends at byte {} while reading {} ({} bytes at byte {}) of {}",
                   file_name_, bytes_.size(), what, n_bytes, position_, context_);
    }

private:
    void require(uint64_t n_bytes, const char* what) const {
        if (n_bytes > remaining()) [[unlikely]]
            fail_truncated(n_bytes, what);
    }

    std::span<const uint8_t> bytes_;
    const std::string& file_name_;
    uint64_t position_ = 0;
    std::string context_ = "the header";
};

}  // namespace ladder::gguf
