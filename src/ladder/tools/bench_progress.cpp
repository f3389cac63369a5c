#include "ladder/tools/bench_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace ladder::tools {

namespace {

// The rate is over this window, so it moves with the load, not the average.
constexpr double kRateWindowSeconds = 3.0;
constexpr double kTerminalIntervalSeconds = 0.25;
// Into a log, a line now and then is enough.
constexpr double kLogIntervalSeconds = 10.0;

}  // namespace

ProgressLine::ProgressLine(bool enabled, std::string label, int64_t n_total)
    : enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) != 0),
      label_(std::move(label)),
      n_total_(n_total) {}

double ProgressLine::recent_rate(double elapsed_s, int64_t n_tokens) {
    samples_.emplace_back(elapsed_s, n_tokens);
    while (samples_.size() > 2 && elapsed_s - samples_[1].first >= kRateWindowSeconds) {
        samples_.pop_front();
    }
    const auto& [first_s, first_tokens] = samples_.front();
    const double span = elapsed_s - first_s;
    return span > 0.0 ? static_cast<double>(n_tokens - first_tokens) / span : 0.0;
}

std::string ProgressLine::text(int64_t n_done, int64_t n_failed, double tokens_per_second) const {
    return fmt::format("{}{}/{} requests done{}, {:.1f} output tok/s",
                       label_.empty() ? "" : label_ + ": ", n_done, n_total_,
                       n_failed > 0 ? fmt::format(" ({} failed)", n_failed) : std::string(),
                       tokens_per_second);
}

void ProgressLine::update(double elapsed_s, int64_t n_done, int64_t n_failed, int64_t n_tokens) {
    const double rate = recent_rate(elapsed_s, n_tokens);
    if (!enabled_) return;
    const double interval = terminal_ ? kTerminalIntervalSeconds : kLogIntervalSeconds;
    if (last_print_s_ >= 0.0 && elapsed_s - last_print_s_ < interval) return;
    last_print_s_ = elapsed_s;
    if (terminal_) {
        fmt::print(stderr, "\r\033[K{}", text(n_done, n_failed, rate));
    } else {
        fmt::print(stderr, "{}\n", text(n_done, n_failed, rate));
    }
    std::fflush(stderr);
}

void ProgressLine::finish(double elapsed_s, int64_t n_done, int64_t n_failed, int64_t n_tokens) {
    if (!enabled_) return;
    const double mean_rate = elapsed_s > 0.0 ? static_cast<double>(n_tokens) / elapsed_s : 0.0;
    fmt::print(stderr, "{}{} in {:.1f} s\n", terminal_ ? "\r\033[K" : "",
               text(n_done, n_failed, mean_rate), elapsed_s);
}

}  // namespace ladder::tools
