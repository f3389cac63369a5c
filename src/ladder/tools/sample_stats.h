// Mean and standard deviation of repeated measurements, as llama-bench
// reports them: the sample standard deviation (n - 1), 0 for one sample.
#pragma once

#include <span>

namespace ladder::tools {

struct SampleStats {
    double mean = 0.0;
    double stddev = 0.0;
};

// Empty input gives zeros.
SampleStats sample_stats(std::span<const double> samples);

}  // namespace ladder::tools
