// Wall-clock time for timings reported to users (TTFT, tokens/s).
#pragma once

#include <chrono>

namespace ladder::util {

inline double now_seconds() {
    using Clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

}  // namespace ladder::util
