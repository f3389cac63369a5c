#include "ladder/engine/circuit_breaker.h"

namespace ladder::engine {

CircuitBreaker::CircuitBreaker(int32_t failures_to_open, double open_seconds)
    : failures_to_open_(failures_to_open), open_seconds_(open_seconds) {}

bool CircuitBreaker::allow(double now) {
    const std::lock_guard lock(mutex_);
    if (open_until_ == 0.0) return true;  // closed
    if (now < open_until_ || trial_in_flight_) return false;
    trial_in_flight_ = true;  // half open: this caller is the trial
    return true;
}

void CircuitBreaker::record_success() {
    const std::lock_guard lock(mutex_);
    failures_in_a_row_ = 0;
    open_until_ = 0.0;
    trial_in_flight_ = false;
}

void CircuitBreaker::record_failure(double now) {
    const std::lock_guard lock(mutex_);
    ++failures_in_a_row_;
    // A failed trial opens it again at once; a closed breaker opens after a run.
    if (trial_in_flight_ || failures_in_a_row_ >= failures_to_open_) {
        if (open_until_ == 0.0 || trial_in_flight_) ++n_opened_;
        open_until_ = now + open_seconds_;
        trial_in_flight_ = false;
    }
}

bool CircuitBreaker::is_open(double now) const {
    const std::lock_guard lock(mutex_);
    return open_until_ != 0.0 && (now < open_until_ || trial_in_flight_);
}

int64_t CircuitBreaker::n_opened() const {
    const std::lock_guard lock(mutex_);
    return n_opened_;
}

}  // namespace ladder::engine
