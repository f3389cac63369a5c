#include "ladder/util/realtime_priority.h"

#include <cerrno>

#if defined(__linux__)
#include <sched.h>
#endif

namespace ladder::util {

int request_realtime_priority() {
#if defined(__linux__)
    sched_param param{};
    param.sched_priority = sched_get_priority_min(SCHED_FIFO);
    // 0 is this thread on Linux, where sched_setscheduler acts on threads.
    return sched_setscheduler(0, SCHED_FIFO, &param) == 0 ? 0 : errno;
#else
    return ENOSYS;
#endif
}

}  // namespace ladder::util
