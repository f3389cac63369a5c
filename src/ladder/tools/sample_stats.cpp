#include "ladder/tools/sample_stats.h"

#include <cmath>

namespace ladder::tools {

SampleStats sample_stats(std::span<const double> samples) {
    SampleStats stats;
    if (samples.empty()) return stats;
    double sum = 0.0;
    for (const double x : samples) sum += x;
    stats.mean = sum / static_cast<double>(samples.size());
    if (samples.size() < 2) return stats;
    // Two passes: the sum of squared deviations does not cancel the way
    // sum(x^2) - n * mean^2 does when the spread is small beside the mean.
    double squares = 0.0;
    for (const double x : samples) squares += (x - stats.mean) * (x - stats.mean);
    stats.stddev = std::sqrt(squares / static_cast<double>(samples.size() - 1));
    return stats;
}

}  // namespace ladder::tools
