#include "ladder/tools/bench_arrivals.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ladder/tools/seeded_random.h"
#include "ladder/util/error.h"

namespace ladder::tools {

std::vector<double> arrival_times(int64_t n_requests, double requests_per_second, uint64_t seed) {
    std::vector<double> times(static_cast<size_t>(std::max<int64_t>(n_requests, 0)), 0.0);
    if (!std::isfinite(requests_per_second) || requests_per_second <= 0.0) return times;
    SeededRandom random(seed);
    for (size_t i = 1; i < times.size(); ++i) {
        // Inverse transform: −ln(1 − u) / λ is exponential with mean 1 / λ.
        const double gap = -std::log1p(-random.unit()) / requests_per_second;
        times[i] = times[i - 1] + gap;
    }
    return times;
}

double parse_request_rate(const std::string& text) {
    if (text == "inf") return std::numeric_limits<double>::infinity();
    size_t used = 0;
    double rate = 0.0;
    try {
        rate = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !(rate > 0.0)) {
        util::fail("--request-rate must be a positive number of requests/s or inf, not '{}'", text);
    }
    return rate;
}

}  // namespace ladder::tools
