// The live line `ladder bench` keeps on stderr: requests done of the total,
// failures, and output tokens per second over the last few seconds. On a
// terminal it rewrites itself; into a file or pipe it adds a line now and then.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>

namespace ladder::tools {

class ProgressLine {
public:
    // `label` starts the line ("concurrency 4"), may be empty.
    ProgressLine(bool enabled, std::string label, int64_t n_total);

    // Called often; prints when it is time to.
    void update(double elapsed_s, int64_t n_done, int64_t n_failed, int64_t n_tokens);
    // The last line, ended.
    void finish(double elapsed_s, int64_t n_done, int64_t n_failed, int64_t n_tokens);

private:
    std::string text(int64_t n_done, int64_t n_failed, double tokens_per_second) const;
    double recent_rate(double elapsed_s, int64_t n_tokens);

    bool enabled_;
    bool terminal_;
    std::string label_;
    int64_t n_total_;
    double last_print_s_ = -1.0;
    std::deque<std::pair<double, int64_t>> samples_;  // (seconds, tokens so far)
};

}  // namespace ladder::tools
