#include "ladder/util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "ladder/util/error.h"

namespace ladder::util {

namespace {

// Unique among the threads and processes that might write next to the same
// target at once.
std::string temporary_name_for(const std::string& path) {
    static std::atomic<uint64_t> counter{0};
    return fmt::format("{}.tmp.{}.{}", path, static_cast<long>(getpid()), counter.fetch_add(1));
}

}  // namespace

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temporary_path_(temporary_name_for(path_)) {
    // 0666 before the umask, the mode an ordinary fopen gives a new file.
    const int fd = ::open(temporary_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail("cannot write '{}': {}", path_, std::strerror(errno));
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
        const int error = errno;
        ::close(fd);
        ::unlink(temporary_path_.c_str());
        fail("cannot write '{}': {}", path_, std::strerror(error));
    }
}

AtomicFile::~AtomicFile() {
    if (file_ != nullptr) std::fclose(file_);
    if (!committed_) ::unlink(temporary_path_.c_str());
}

void AtomicFile::fail_io(const char* what) const {
    fail("cannot write '{}' ({}): {}", path_, what, std::strerror(errno));
}

void AtomicFile::write(const void* data, size_t n_bytes) {
    if (n_bytes > 0 && std::fwrite(data, 1, n_bytes, file_) != n_bytes) fail_io("write");
}

void AtomicFile::commit() {
    if (std::fflush(file_) != 0) fail_io("flush");
    if (::fsync(::fileno(file_)) != 0) fail_io("sync");
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) fail_io("close");
    if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) fail_io("rename");
    committed_ = true;
}

}  // namespace ladder::util
