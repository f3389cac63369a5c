// Stops calling a service that keeps failing, for a while: after
// `failures_to_open` failures in a row the breaker opens and allow() says no
// for `open_seconds`; then one trial call is let through (half open): its
// success closes the breaker, its failure opens it again. The remote KV tier
// uses one so that a Redis that is down costs a request nothing, not a
// timeout per lookup. Thread-safe; the clock is a parameter so tests need
// not sleep.
#pragma once

#include <cstdint>
#include <mutex>

namespace ladder::engine {

class CircuitBreaker {
public:
    CircuitBreaker(int32_t failures_to_open, double open_seconds);

    // Whether a call may be made now. While half open, only the first caller
    // gets true until that trial reports back.
    bool allow(double now);
    void record_success();
    void record_failure(double now);

    bool is_open(double now) const;
    int64_t n_opened() const;  // times it opened since start

private:
    const int32_t failures_to_open_;
    const double open_seconds_;
    mutable std::mutex mutex_;
    int32_t failures_in_a_row_ = 0;
    double open_until_ = 0.0;  // > 0: opened; allow() is false before this time
    bool trial_in_flight_ = false;
    int64_t n_opened_ = 0;
};

}  // namespace ladder::engine
