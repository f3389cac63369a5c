// Always-on invariant checks: a failed check is a bug in ladder, not bad input,
// so it aborts with file and line. Bad input is reported with exceptions or
// error values at the module edge instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace ladder::util {

[[noreturn]] inline void check_failed(const char* condition, const char* message,
                                      const char* file, int line) {
    std::fprintf(stderr, "ladder: internal error at %s:%d: %s (%s)\n", file, line, message,
                 condition);
    std::abort();
}

}  // namespace ladder::util

#define LADDER_CHECK(condition, message)                                             \
    do {                                                                             \
        if (!(condition)) [[unlikely]]                                               \
            ::ladder::util::check_failed(#condition, message, __FILE__, __LINE__);  \
    } while (0)

#ifdef NDEBUG
#define LADDER_DCHECK(condition, message) \
    do {                                  \
    } while (0)
#else
#define LADDER_DCHECK(condition, message) LADDER_CHECK(condition, message)
#endif
