// A file written in full or not at all: bytes go to a temporary file next to
// the target, which replaces the target only on commit(). Destroyed without a
// commit (an error, an exception), it removes the temporary and leaves any
// existing file at the target untouched.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace ladder::util {

class AtomicFile {
public:
    // Creates the temporary file. Throws InputError naming the path when the
    // directory cannot be written.
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Throws InputError on a write error (a full disk).
    void write(const void* data, size_t n_bytes);
    // Flushes, syncs and renames the temporary over the target.
    void commit();

    const std::string& temporary_path() const { return temporary_path_; }

private:
    [[noreturn]] void fail_io(const char* what) const;

    std::string path_;
    std::string temporary_path_;
    std::FILE* file_ = nullptr;
    bool committed_ = false;
};

}  // namespace ladder::util
