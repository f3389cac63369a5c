// When each request of a benchmark is sent: all at once, or as a renewal
// process of a given mean rate, as vLLM's bench serve does: Poisson
// (exponential gaps) by default, burstier or steadier with gamma gaps of
// shape `burstiness` (vLLM's --burstiness). For long simulated runs the rate
// can follow a day's curve.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ladder/tools/seeded_random.h"

namespace ladder::tools {

struct ArrivalOptions {
    double request_rate = std::numeric_limits<double>::infinity();  // mean requests/s
    // Shape of the gamma gaps: 1 is Poisson, below 1 burstier, above steadier.
    double burstiness = 1.0;
    // The diurnal curve: the rate at time t is
    //   request_rate × (1 − amplitude × cos(2π t / period)),
    // lowest at the start (night), highest half a period in (midday), and
    // request_rate on average over whole periods. 0: a constant rate.
    double diurnal_amplitude = 0.0;
    double diurnal_period_s = 86400.0;
};

// Throws util::InputError naming --burstiness, --diurnal-amplitude or
// --diurnal-period (the rate is checked where it is parsed).
void check_arrival_options(const ArrivalOptions& options);

// Arrival times one at a time, the first at 0: the simulator draws millions
// of them and holds none.
class ArrivalProcess {
public:
    ArrivalProcess(const ArrivalOptions& options, uint64_t seed);
    double next();

private:
    // The gap to the next arrival in operational time, mean 1 / rate.
    double draw_gap();
    // Wall time at which the rate's integral from 0 reaches `operational`.
    double wall_time(double operational) const;

    ArrivalOptions options_;
    SeededRandom random_;
    bool started_ = false;
    double operational_ = 0.0;  // the rate's integral, in units of 1 / request_rate
    double wall_ = 0.0;
};

// Send times in seconds after the start, the first at 0. An infinite (or
// non-positive) rate sends every request at 0. Deterministic for a seed.
std::vector<double> arrival_times(int64_t n_requests, const ArrivalOptions& options, uint64_t seed);
std::vector<double> arrival_times(int64_t n_requests, double requests_per_second, uint64_t seed);

// --request-rate's value: a positive number of requests/s, or "inf".
// Throws util::InputError naming the flag otherwise.
double parse_request_rate(const std::string& text);

}  // namespace ladder::tools
