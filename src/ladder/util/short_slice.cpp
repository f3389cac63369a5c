#include "ladder/util/short_slice.h"

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#endif

namespace ladder::util {

#if defined(__linux__)
namespace {

// The kernel's struct sched_attr, first version (48 bytes). Its header
// <linux/sched/types.h> cannot be included beside glibc's <sched.h>.
struct SchedAttr {
    uint32_t size = sizeof(SchedAttr);
    uint32_t sched_policy = 0;
    uint64_t sched_flags = 0;
    int32_t sched_nice = 0;
    uint32_t sched_priority = 0;
    uint64_t sched_runtime = 0;  // for the normal policy: the slice, in ns
    uint64_t sched_deadline = 0;
    uint64_t sched_period = 0;
};
static_assert(sizeof(SchedAttr) == 48, "sched_attr's first version is 48 bytes");

}  // namespace
#endif

bool request_short_slice(std::chrono::microseconds slice) {
#if defined(__linux__) && defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
    SchedAttr attr;
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) return false;
    // Only the normal policy has slices; a thread made real-time keeps that.
    if (attr.sched_policy != SCHED_OTHER) return false;
    attr.size = sizeof(attr);
    attr.sched_flags = 0;
    // The kernel clamps it to [0.1 ms, 100 ms]; kernels before 6.12 ignore it.
    attr.sched_runtime =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(slice).count());
    return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
#else
    (void)slice;
    return false;
#endif
}

}  // namespace ladder::util
