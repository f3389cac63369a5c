// Moves the calling thread to the kernel's real-time FIFO policy at its lowest
// priority: it then runs as soon as it wakes, ahead of every normal thread
// (the engine's, the operator's other processes, the kernel's own workers),
// and keeps the CPU until it sleeps. For a thread whose work is short and
// must not wait: the server's event loop, under `--loop-priority realtime`.
// Needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1; the kernel's
// real-time throttle (sched_rt_runtime_us) still leaves others 5% of a CPU.
#pragma once

namespace ladder::util {

// 0 when the kernel took the request, else its errno (EPERM without the
// privilege); elsewhere than Linux, ENOSYS.
int request_realtime_priority();

}  // namespace ladder::util
