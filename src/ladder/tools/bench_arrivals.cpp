#include "ladder/tools/bench_arrivals.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// Exponential with mean 1, by inverse transform: −ln(1 − u).
double standard_exponential(SeededRandom& random) { return -std::log1p(-random.unit()); }

double standard_normal(SeededRandom& random) {
    // Box–Muller; 1 − u keeps the logarithm's argument in (0, 1].
    const double radius = std::sqrt(-2.0 * std::log1p(-random.unit()));
    return radius * std::cos(2.0 * std::numbers::pi * random.unit());
}

// Gamma with the given shape and mean 1 (Marsaglia and Tsang 2000; a shape
// below 1 is drawn at shape + 1 and scaled by u^(1 / shape)).
double gamma_mean_one(SeededRandom& random, double shape) {
    const double boosted = shape < 1.0 ? shape + 1.0 : shape;
    const double d = boosted - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    double draw = 0.0;
    for (;;) {
        const double x = standard_normal(random);
        const double v_root = 1.0 + c * x;
        if (v_root <= 0.0) continue;
        const double v = v_root * v_root * v_root;
        const double u = random.unit();
        if (std::log1p(-u) < 0.5 * x * x + d - d * v + d * std::log(v)) {
            draw = d * v;
            break;
        }
    }
    if (shape < 1.0) draw *= std::pow(1.0 - random.unit(), 1.0 / shape);
    return draw / shape;
}

}  // namespace

void check_arrival_options(const ArrivalOptions& options) {
    if (!(options.burstiness > 0.0) || !std::isfinite(options.burstiness)) {
        util::fail("--burstiness must be a positive number, not {}", options.burstiness);
    }
    if (!(options.diurnal_amplitude >= 0.0 && options.diurnal_amplitude < 1.0)) {
        util::fail("--diurnal-amplitude must be in [0, 1), not {}", options.diurnal_amplitude);
    }
    if (!(options.diurnal_period_s > 0.0) || !std::isfinite(options.diurnal_period_s)) {
        util::fail("--diurnal-period must be a positive number of seconds, not {}",
                   options.diurnal_period_s);
    }
}

ArrivalProcess::ArrivalProcess(const ArrivalOptions& options, uint64_t seed)
    : options_(options), random_(seed) {}

double ArrivalProcess::next() {
    const bool all_at_once =
        !std::isfinite(options_.request_rate) || !(options_.request_rate > 0.0);
    if (!started_ || all_at_once) {
        started_ = true;
        return 0.0;
    }
    operational_ += draw_gap();
    wall_ = wall_time(operational_);
    return wall_;
}

double ArrivalProcess::draw_gap() {
    // Burstiness 1 keeps the exponential draw exactly, so Poisson runs give
    // the times they always gave for a seed.
    const double unit_gap = options_.burstiness == 1.0
                                ? standard_exponential(random_)
                                : gamma_mean_one(random_, options_.burstiness);
    return unit_gap / options_.request_rate;
}

// With rate r(1 − A cos(ωt)), the integral is r(t − A sin(ωt) / ω); we keep
// it in units of 1 / r, so solve t − A sin(ωt) / ω = s for t. The left side
// rises monotonically (A < 1), so Newton's method from the last time converges.
double ArrivalProcess::wall_time(double operational) const {
    const double amplitude = options_.diurnal_amplitude;
    if (amplitude == 0.0) return operational;
    const double omega = 2.0 * std::numbers::pi / options_.diurnal_period_s;
    double t = std::max(wall_, operational - amplitude / omega);
    for (int iteration = 0; iteration < 50; ++iteration) {
        const double error = t - amplitude * std::sin(omega * t) / omega - operational;
        const double slope = 1.0 - amplitude * std::cos(omega * t);
        const double step = error / slope;
        t -= step;
        if (std::abs(step) <= 1e-12 * std::max(1.0, std::abs(t))) break;
    }
    return std::max(t, wall_);
}

std::vector<double> arrival_times(int64_t n_requests, const ArrivalOptions& options,
                                  uint64_t seed) {
    std::vector<double> times(static_cast<size_t>(std::max<int64_t>(n_requests, 0)), 0.0);
    ArrivalProcess process(options, seed);
    for (double& time : times) time = process.next();
    return times;
}

std::vector<double> arrival_times(int64_t n_requests, double requests_per_second, uint64_t seed) {
    ArrivalOptions options;
    options.request_rate = requests_per_second;
    return arrival_times(n_requests, options, seed);
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
