#include "ladder/util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "ladder/util/error.h"

namespace ladder::util {

MappedFile::MappedFile(const std::string& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open '{}': {}", path, std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        fail("'{}' is not a regular file", path);
    }
    size_bytes_ = static_cast<size_t>(info.st_size);
    stamp_ = {static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino),
              static_cast<int64_t>(info.st_size),
              static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec};
    if (size_bytes_ > 0) {
        void* mapped = ::mmap(nullptr, size_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapped == MAP_FAILED) {
            const int error = errno;
            ::close(fd);
            fail("cannot map '{}': {}", path, std::strerror(error));
        }
        data_ = static_cast<const uint8_t*>(mapped);
    }
    ::close(fd);
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_bytes_);
}

}  // namespace ladder::util
