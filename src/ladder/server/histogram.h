// A Prometheus histogram: cumulative bucket counts, sum and count, rendered
// in the text exposition format. Not thread-safe; its owner locks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::server {

class Histogram {
public:
    // upper_bounds ascending; a +Inf bucket is always added.
    explicit Histogram(std::vector<double> upper_bounds);

    void observe(double value);

    // Appends `# TYPE`, the `_bucket{le=...}` lines, `_sum` and `_count`.
    // labels is empty or `key="value"` pairs without braces.
    void render(std::string& out, std::string_view name, std::string_view help,
                std::string_view labels) const;

    int64_t count() const { return count_; }

private:
    std::vector<double> upper_bounds_;
    std::vector<int64_t> counts_;  // per bucket, not cumulative; last = +Inf
    double sum_ = 0.0;
    int64_t count_ = 0;
};

}  // namespace ladder::server
