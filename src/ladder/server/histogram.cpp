#include "ladder/server/histogram.h"

#include <fmt/format.h>

#include <algorithm>

namespace ladder::server {

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
    // Prometheus buckets are "less than or equal": value == bound counts in it.
    const auto bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value);
    ++counts_[static_cast<size_t>(bucket - upper_bounds_.begin())];
    sum_ += value;
    ++count_;
}

void Histogram::render(std::string& out, std::string_view name, std::string_view help,
                       std::string_view labels) const {
    const std::string prefix = labels.empty() ? "" : fmt::format("{},", labels);
    const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} histogram\n", name, help,
                   name);
    int64_t cumulative = 0;
    for (size_t i = 0; i < upper_bounds_.size(); ++i) {
        cumulative += counts_[i];
        fmt::format_to(std::back_inserter(out), "{}_bucket{{{}le=\"{}\"}} {}\n", name, prefix,
                       upper_bounds_[i], cumulative);
    }
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{}le=\"+Inf\"}} {}\n", name, prefix,
                   count_);
    fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n{}_count{} {}\n", name, braces, sum_,
                   name, braces, count_);
}

}  // namespace ladder::server
