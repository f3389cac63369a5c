// Asks the kernel to run the calling thread in short turns: for a thread that
// wakes often and must answer at once (the server's event loop) while the
// engine's threads keep every core busy. Linux's EEVDF scheduler (6.12 and
// later) lets any thread ask for a slice shorter than the default (about 3 ms
// here), which gives it an earlier deadline, so a wake-up preempts the running
// thread instead of waiting for its turn to end. Elsewhere it does nothing.
#pragma once

#include <chrono>

namespace ladder::util {

// True when the kernel took the request; nice and policy are kept.
bool request_short_slice(std::chrono::microseconds slice);

}  // namespace ladder::util
