// Helpers for the gguf tests: a raw byte builder for files the writer would
// refuse to produce (hostile counts, bad types), and error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/gguf/gguf_file.h"
#include "ladder/util/error.h"

namespace ladder::gguf::testing {

inline constexpr const char* kTestName = "test.gguf";

// Appends GGUF fields byte by byte, little-endian, with no validation at all.
struct RawGguf {
    std::vector<uint8_t> bytes;

    template <typename T>
    RawGguf& put(T value) {
        const auto* p = reinterpret_cast<const uint8_t*>(&value);
        bytes.insert(bytes.end(), p, p + sizeof(T));
        return *this;
    }
    RawGguf& u8(uint8_t v) { return put(v); }
    RawGguf& u32(uint32_t v) { return put(v); }
    RawGguf& u64(uint64_t v) { return put(v); }
    RawGguf& str(std::string_view s) {
        u64(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
        return *this;
    }
    RawGguf& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
        bytes.insert(bytes.end(), {'G', 'G', 'U', 'F'});
        return u32(version).u64(n_tensors).u64(n_kv);
    }
    RawGguf& kv_u32(std::string_view key, uint32_t v) {
        return str(key).u32(static_cast<uint32_t>(ValueType::UInt32)).u32(v);
    }
    // A tensor info: name, dims, type id, offset.
    RawGguf& tensor(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type_id,
                    uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(dims.size()));
        for (uint64_t d : dims) u64(d);
        return u32(type_id).u64(offset);
    }
    RawGguf& pad_to(uint64_t alignment) {
        bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, 0);
        return *this;
    }
    RawGguf& zeros(size_t n) {
        bytes.resize(bytes.size() + n, 0);
        return *this;
    }
};

// Parses bytes expecting an InputError; returns its message (empty on none).
inline std::string parse_error(const std::vector<uint8_t>& bytes) {
    try {
        GgufFile::parse(bytes, kTestName);
    } catch (const util::InputError& error) {
        return error.what();
    }
    return {};
}

// The error must name the file, be one line, and say what is wrong.
#define EXPECT_GGUF_ERROR(bytes, expected_part)                                                 \
    do {                                                                                        \
        const std::string message = ::ladder::gguf::testing::parse_error(bytes);                \
        ASSERT_FALSE(message.empty()) << "file was accepted, expected: " << expected_part;      \
        EXPECT_EQ(message.rfind(std::string(::ladder::gguf::testing::kTestName) + ": ", 0), 0u) \
            << "message does not start with the file name: " << message;                        \
        EXPECT_EQ(message.find('\n'), std::string::npos) << "message spans lines: " << message; \
        EXPECT_NE(message.find(expected_part), std::string::npos)                               \
            << "message '" << message << "' does not mention '" << expected_part << "'";        \
    } while (0)

// Replaces every occurrence of from with to (same length) in bytes.
inline int patch_all(std::vector<uint8_t>& bytes, std::string_view from, std::string_view to) {
    EXPECT_EQ(from.size(), to.size());
    int n_patched = 0;
    for (size_t i = 0; i + from.size() <= bytes.size(); ++i) {
        if (std::memcmp(bytes.data() + i, from.data(), from.size()) == 0) {
            std::memcpy(bytes.data() + i, to.data(), to.size());
            ++n_patched;
        }
    }
    return n_patched;
}

}  // namespace ladder::gguf::testing
