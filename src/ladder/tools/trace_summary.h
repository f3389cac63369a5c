// `ladder trace-summary`: the text form of a trace that `--trace` or
// /start_profile wrote: where step time goes by operation, by layer, and how
// busy each thread was. Reads the trace-event JSON alone; knows no engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ladder/tools/sim_profile.h"

namespace ladder::tools {

struct OperationTime {
    std::string name;      // "forward", "attention", ...
    std::string category;  // "step" (the step's phases), "layer", "op" (inside a layer)
    int64_t n_calls = 0;
    double total_us = 0.0;
};

struct LayerTime {
    int64_t layer = 0;
    double total_us = 0.0;
    // Time of each operation group inside the layer, in the order of
    // TraceSummary::layer_operations.
    std::vector<double> operation_us;
};

struct ThreadTime {
    std::string name;
    int64_t tid = 0;
    double busy_us = 0.0;   // its top-level slices: steps on the engine, tasks on a worker
    double sleep_us = 0.0;  // a pool worker asleep, waiting for work
    int64_t n_slices = 0;
};

// One engine step as traced: its duration and the shape its args give
// (tokens computed, positions attended summed over rows and the decode
// rows' part of them, distinct KV positions read, rows with logits).
struct TracedStep {
    double dur_us = 0.0;
    StepWork work;
    bool has_shape = false;  // false for a trace without logit_rows and context
};

struct TraceSummary {
    int64_t n_steps = 0;
    int64_t n_step_tokens = 0;
    double step_us = 0.0;  // all steps together
    double span_us = 0.0;  // first step's start to last step's end
    int64_t n_requests = 0;
    std::vector<OperationTime> operations;  // by total time, largest first
    std::vector<std::string> layer_operations;
    std::vector<LayerTime> layers;  // by layer index
    std::vector<ThreadTime> threads;
    std::vector<TracedStep> steps;  // in the trace's order
};

// Throws util::InputError when trace is not a trace-event file or has no step.
TraceSummary summarize_trace(const nlohmann::json& trace);
TraceSummary read_trace_summary(const std::string& path);

}  // namespace ladder::tools
