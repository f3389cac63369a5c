// `ladder bench` from start to end: check the options and the endpoint,
// make the prompts, run each load level, print the report, write the JSON,
// the charts and the HTML page. The command only parses flags into this.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/bench_metrics.h"

namespace ladder::tools {

struct BenchConfig {
    std::string base_url = "http://127.0.0.1:8080";
    std::string api_key;
    std::string model;  // empty: the first the endpoint lists
    DatasetOptions dataset;
    double request_rate = std::numeric_limits<double>::infinity();
    double burstiness = 1.0;                 // gamma shape of the gaps between arrivals; 1: Poisson
    int64_t max_concurrency = 0;             // 0: no limit
    std::vector<int64_t> sweep_concurrency;  // one run per level, in order
    SummaryOptions summary;
    std::string json_path;
    std::string plot_dir;
    double timeout_s = 600.0;
    BenchSampling sampling;
    bool show_progress = true;
};

// Runs it. Throws util::InputError on bad options, an endpoint that cannot
// be used, or a run in which every request failed (after writing the JSON).
void run_bench(const BenchConfig& config);

// "random (input 1024, output 128)", "sharegpt data.json", ...
std::string describe_dataset(const DatasetOptions& options);

}  // namespace ladder::tools
