#include "ladder/engine/cache_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ladder/util/error.h"

namespace ladder::engine {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSecretName = "checksum.key";

bool transient(int error) {
    return error == EMFILE || error == ENFILE || error == ENOMEM || error == EINTR ||
           error == EAGAIN || error == EIO;
}

FileStatus status_of_open_error(int error) {
    if (error == ENOENT) return FileStatus::Missing;
    // O_NOFOLLOW on a symlink gives ELOOP; a socket gives ENXIO.
    if (error == ELOOP || error == ENXIO || error == EISDIR) return FileStatus::NotRegular;
    return transient(error) ? FileStatus::Transient : FileStatus::Unreadable;
}

// Closes on every path out.
class Descriptor {
public:
    explicit Descriptor(int fd) : fd_(fd) {}
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

bool write_all(int fd, std::span<const uint8_t> bytes) {
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        written += static_cast<size_t>(n);
    }
    return true;
}

// Reads exactly out.size() bytes from offset 0: Ok, WrongSize (the file
// ended early) or Transient.
FileStatus read_all(int fd, std::span<uint8_t> out) {
    size_t done = 0;
    while (done < out.size()) {
        const ssize_t n =
            ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return FileStatus::Transient;
        if (n == 0) return FileStatus::WrongSize;
        done += static_cast<size_t>(n);
    }
    return FileStatus::Ok;
}

int64_t mtime_ns(const struct stat& info) {
    return static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
}

}  // namespace

CacheDirectory::CacheDirectory(const fs::path& path, const char* flag) : path_(path) {
    std::error_code error;
    if (path_.has_parent_path()) fs::create_directories(path_.parent_path(), error);
    if (::mkdir(path_.c_str(), 0700) != 0 && errno != EEXIST) {
        util::fail("{}: cannot create '{}': {}", flag, path_.string(), std::strerror(errno));
    }
    // The path itself may be a symlink the operator chose; what it leads to
    // must be a directory only this user can change.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) {
        util::fail("{}: cannot open '{}' as a directory: {}", flag, path_.string(),
                   std::strerror(errno));
    }
    struct stat info {};
    const bool stat_ok = ::fstat(fd_, &info) == 0;
    const char* problem = !stat_ok                     ? "cannot be examined"
                          : info.st_uid != ::geteuid() ? "belongs to another user"
                          : (info.st_mode & (S_IWGRP | S_IWOTH)) != 0
                              ? "can be written by other users (chmod 700 it)"
                              : nullptr;
    if (problem != nullptr) {
        ::close(fd_);
        util::fail("{}: refusing '{}': it {}", flag, path_.string(), problem);
    }
}

CacheDirectory::~CacheDirectory() {
    if (fd_ >= 0) ::close(fd_);
}

KeyedHash::Secret CacheDirectory::secret() const {
    KeyedHash::Secret secret{};
    auto refuse = [&](const std::string& why) -> KeyedHash::Secret {
        util::fail("--kv-disk-cache: refusing '{}': {}", (path_ / kSecretName).string(), why);
    };
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int fd = ::openat(fd_, kSecretName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT) return refuse(std::strerror(errno));
        if (fd >= 0) {
            const Descriptor file(fd);
            struct stat info {};
            if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return refuse("not a file");
            if (info.st_uid != ::geteuid()) return refuse("it belongs to another user");
            if ((info.st_mode & 077) != 0) return refuse("others may read it (chmod 600 it)");
            if (info.st_size != static_cast<off_t>(secret.size()) ||
                read_all(fd, secret) != FileStatus::Ok) {
                return refuse(fmt::format("it does not hold a {}-byte secret", secret.size()));
            }
            return secret;
        }
        // None yet: write one, then link it in; linking fails if another
        // process got there first, and its secret is read instead.
        std::string temporary;
        const int out = create_temporary(temporary);
        if (out < 0) return refuse(std::strerror(errno));
        const KeyedHash::Secret fresh = KeyedHash::random_secret();
        const bool written = write_all(out, fresh);
        ::close(out);
        const bool linked = written && ::linkat(fd_, temporary.c_str(), fd_, kSecretName, 0) == 0;
        const int link_error = errno;
        ::unlinkat(fd_, temporary.c_str(), 0);
        if (linked) return fresh;
        if (!written || link_error != EEXIST) return refuse(std::strerror(link_error));
    }
    return refuse("it keeps changing");
}

std::vector<CacheDirectory::Entry> CacheDirectory::regular_files() const {
    std::vector<Entry> entries;
    const int listing = ::dup(fd_);
    if (listing < 0) return entries;
    DIR* dir = ::fdopendir(listing);  // owns listing from here
    if (dir == nullptr) {
        ::close(listing);
        return entries;
    }
    ::rewinddir(dir);
    while (const dirent* entry = ::readdir(dir)) {
        struct stat info {};
        if (::fstatat(fd_, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(info.st_mode)) {
            continue;
        }
        entries.push_back({entry->d_name, static_cast<int64_t>(info.st_size), mtime_ns(info)});
    }
    ::closedir(dir);
    return entries;
}

FileRead CacheDirectory::read(const std::string& name, size_t expected_bytes,
                              size_t max_bytes) const {
    FileRead result;
    const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        result.status = status_of_open_error(errno);
        return result;
    }
    const Descriptor file(fd);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        result.status = transient(errno) ? FileStatus::Transient : FileStatus::Unreadable;
        return result;
    }
    if (!S_ISREG(info.st_mode)) {
        result.status = FileStatus::NotRegular;
        return result;
    }
    const auto size = static_cast<size_t>(info.st_size);
    if (expected_bytes != 0 ? size != expected_bytes : size > max_bytes) {
        result.status = FileStatus::WrongSize;
        return result;
    }
    try {
        result.bytes.resize(size);
    } catch (const std::bad_alloc&) {
        result.status = FileStatus::Transient;
        return result;
    }
    result.status = read_all(fd, result.bytes);
    // Longer than it said when opened: it is being changed under us.
    uint8_t extra = 0;
    if (result.status == FileStatus::Ok && ::pread(fd, &extra, 1, static_cast<off_t>(size)) == 1) {
        result.status = FileStatus::WrongSize;
    }
    if (result.status != FileStatus::Ok) result.bytes.clear();
    return result;
}

int CacheDirectory::create_temporary(std::string& name) const {
    // The pid and a counter make the name this process's own; O_EXCL makes
    // sure it was not there before (nor a symlink planted under it).
    static std::atomic<uint64_t> counter{0};
    name = fmt::format(".{}.{}{}", ::getpid(), counter.fetch_add(1), kTemporarySuffix);
    return ::openat(fd_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

bool CacheDirectory::write_atomically(const std::string& name,
                                      std::span<const uint8_t> bytes) const {
    std::string temporary;
    const int fd = create_temporary(temporary);
    if (fd < 0) return false;
    const bool written = write_all(fd, bytes);
    const bool closed = ::close(fd) == 0;
    if (written && closed && ::renameat(fd_, temporary.c_str(), fd_, name.c_str()) == 0)
        return true;
    ::unlinkat(fd_, temporary.c_str(), 0);
    return false;
}

void CacheDirectory::remove(const std::string& name) const { ::unlinkat(fd_, name.c_str(), 0); }

}  // namespace ladder::engine
