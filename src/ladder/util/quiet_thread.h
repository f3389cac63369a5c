// Helper threads that never take a process's signals.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

namespace ladder::util {

// Starts a thread with every signal blocked from its first instruction. The
// kernel hands a process-directed signal (SIGTERM, SIGINT) to any thread that
// does not block it; a writer thread started before `ladder serve` blocks
// them for its own sigtimedwait (the trace's, started by --trace) would
// otherwise take the default action and end the process mid-drain, its
// trace cut short.
template <class Body>
std::thread start_quiet_thread(Body&& body) {
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    struct RestoreMask {
        const sigset_t& mask;
        ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
    } restore{previous};
    return std::thread(std::forward<Body>(body));
}

}  // namespace ladder::util
