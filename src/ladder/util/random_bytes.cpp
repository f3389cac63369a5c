#include "ladder/util/random_bytes.h"

#include <sys/random.h>

#include <cerrno>

#include "ladder/util/check.h"

namespace ladder::util {

void random_bytes(std::span<uint8_t> out) {
    size_t filled = 0;
    while (filled < out.size()) {
        const ssize_t n = getrandom(out.data() + filled, out.size() - filled, 0);
        if (n < 0 && errno == EINTR) continue;
        LADDER_CHECK(n > 0, "getrandom failed");
        filled += static_cast<size_t>(n);
    }
}

}  // namespace ladder::util
