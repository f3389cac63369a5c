// Puts a benchmark's load on the endpoint: requests released at their
// arrival times (all at once, Poisson, or gamma gaps of a burstiness), at most max_concurrency in
// flight, one thread and one HTTP connection per request in flight.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ladder/tools/bench_client.h"
#include "ladder/tools/bench_request.h"

namespace ladder::tools {

struct LoadOptions {
    double request_rate = std::numeric_limits<double>::infinity();  // requests/s
    double burstiness = 1.0;      // gamma shape of the gaps; 1: Poisson
    int64_t max_concurrency = 0;  // 0: no limit
    uint64_t seed = 0;            // of the arrival times
    bool show_progress = true;
    std::string label;  // starts the progress line
};

struct BenchRun {
    std::vector<RequestResult> results;  // in the prompts' order
    double duration_s = 0.0;             // from the first request released to the last finished
    int64_t max_concurrency = 0;
    double request_rate = 0.0;
};

BenchRun run_load(const BenchTarget& target, const std::vector<BenchPrompt>& prompts,
                  const LoadOptions& options);

}  // namespace ladder::tools
