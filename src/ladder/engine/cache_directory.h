// A directory of cache files that only this user can change, used through
// one open descriptor, so that a path renamed or replaced later cannot
// redirect a read or a write. Files are created 0600, opened without
// following symlinks and without blocking (a FIFO planted under a cache
// file's name costs nothing), and read only if they are regular files.
// Nothing here deletes a file it was not asked to: a transient error (no
// descriptor or memory left, an interrupted call) says so and leaves it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ladder/engine/keyed_hash.h"

namespace ladder::engine {

enum class FileStatus {
    Ok,
    Missing,     // no such file (any more)
    NotRegular,  // a symlink, FIFO, socket, device or directory: never followed or read
    WrongSize,   // a regular file of another size than asked for
    Transient,   // EMFILE, ENFILE, ENOMEM, EINTR, EAGAIN, EIO: try again later, keep the file
    Unreadable,  // any other error (say, permissions changed): left alone
};

struct FileRead {
    FileStatus status = FileStatus::Missing;
    std::vector<uint8_t> bytes;  // the whole file, when Ok
};

class CacheDirectory {
public:
    // Opens path, creating it (mode 0700, parents as usual) if it does not
    // exist. Throws util::InputError naming `flag` when it is not a directory,
    // belongs to another user, or group or others may write to it.
    CacheDirectory(const std::filesystem::path& path, const char* flag);
    ~CacheDirectory();
    CacheDirectory(const CacheDirectory&) = delete;
    CacheDirectory& operator=(const CacheDirectory&) = delete;

    const std::filesystem::path& path() const { return path_; }

    // The directory's secret, kept in a file of its own (mode 0600) and made
    // on first use; every process using the directory gets the same one.
    // Throws util::InputError when that file is not a 0600 regular file of
    // this user with a secret's size.
    KeyedHash::Secret secret() const;

    struct Entry {
        std::string name;
        int64_t size_bytes = 0;
        int64_t mtime_ns = 0;
    };
    // The regular files in the directory (symlinks and the rest skipped,
    // never followed).
    std::vector<Entry> regular_files() const;

    // Reads name whole if it is a regular file of expected_bytes (at most
    // max_bytes when expected_bytes is 0, any size up to that).
    FileRead read(const std::string& name, size_t expected_bytes, size_t max_bytes = 0) const;
    // Writes bytes under a temporary name of this process's own and renames
    // it to name, so a reader never sees half a file. False when it could not
    // (a full disk); the temporary file is removed then.
    bool write_atomically(const std::string& name, std::span<const uint8_t> bytes) const;
    // Removes name (a symlink itself, never its target).
    void remove(const std::string& name) const;

    // Temporary files end in this, and only this process's are ever removed.
    static constexpr const char* kTemporarySuffix = ".tmp";

private:
    // A new temporary file, open for writing; -1 when it cannot be made.
    int create_temporary(std::string& name) const;

    std::filesystem::path path_;
    int fd_ = -1;
};

}  // namespace ladder::engine
