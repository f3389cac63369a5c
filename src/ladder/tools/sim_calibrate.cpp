#include "ladder/tools/sim_calibrate.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <random>
#include <span>
#include <thread>

#include "ladder/tools/sim_step_fit.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::tools {

std::vector<CalibrationShape> default_calibration_grid() {
    return {{1, 16, 32},   {2, 16, 32},          {4, 16, 32},       {16, 16, 32}, {32, 16, 16},
            {1, 64, 4},    {1, 128, 4},          {1, 256, 4},       {1, 512, 32}, {4, 512, 16},
            {1, 1024, 32}, {16, 1024, 16, true}, {8, 2048, 8, true}};
}

std::vector<MeasuredStep> measure_workload(engine::EngineCore& core, const ReplicaOptions& replica,
                                           const CalibrationShape& shape, uint64_t seed) {
    const engine::KvCachePlan& plan = core.kv_plan();
    // The simulator prices nothing here; it only replays the schedule.
    SimulationOptions options;
    options.profile.source = "replay";
    options.profile.fixed_s = 1.0;
    options.profile.block_size = plan.block_size;
    options.profile.n_kv_blocks = plan.n_blocks;
    options.replica = replica;
    options.replica.count_kv_reads = true;
    std::mt19937_64 random(seed);
    std::vector<SimRequest> requests;
    for (int32_t i = 0; i < shape.n_requests; ++i) {
        SimRequest request{i, 0.0, {}, shape.output_len};
        if (shape.shared_prompt && i > 0) {
            request.prompt = requests.front().prompt;
        } else {
            for (int32_t t = 0; t < shape.prompt_len; ++t)
                request.prompt.push_back(static_cast<int32_t>(random() % 1000) + 10);
        }
        requests.push_back(std::move(request));
    }
    const SimulationResult simulated = simulate(requests, options, true);

    // Ids far from any caller's (engines calibrated at once draw from one counter).
    static std::atomic<uint64_t> next_id = uint64_t{1} << 40;
    for (const SimRequest& request : requests) {
        engine::RequestParams params;
        params.prompt = request.prompt;
        params.max_tokens = request.output_len;
        params.ignore_eos = true;
        params.sampling.temperature = 0.0f;
        core.add_request(engine::RequestId{next_id++}, std::move(params),
                         [](engine::RequestOutput&&) {});
    }
    std::vector<MeasuredStep> steps;
    while (core.has_work()) {
        core.step();
        const engine::EngineStats& stats = core.stats();
        MeasuredStep step;
        step.engine_tokens = stats.last_step_tokens;
        step.engine_logit_rows = stats.last_step_logit_rows;
        step.seconds = stats.last_step_seconds;
        if (steps.size() < simulated.steps.size()) {
            step.simulated = true;
            step.work = simulated.steps[steps.size()].work();
        }
        steps.push_back(step);
    }
    return steps;
}

namespace {

// The profile's KV side from the plan; its costs are fitted.
StepProfile profile_of_plan(const engine::KvCachePlan& plan, const std::string& source) {
    StepProfile profile;
    profile.source = source;
    profile.block_size = plan.block_size;
    profile.n_kv_blocks = plan.n_blocks;
    // Every layer's K and V (a sliding-window group's too) over the tokens
    // the cache holds: what a token's blocks weigh in the tiers below memory.
    if (plan.n_tokens() > 0) {
        profile.kv_bytes_per_token =
            static_cast<double>(plan.bytes) / static_cast<double>(plan.n_tokens());
    }
    return profile;
}

// The grid's first prompts' seed: the same prompts from one calibration to the next.
constexpr uint64_t kSeed = 20261201;

// Step i of a grid shape as first measured, and its seconds in every pass
// where the engine took that same step.
struct StepTimes {
    MeasuredStep step;
    std::vector<double> seconds;
};

bool same_shape(const MeasuredStep& a, const MeasuredStep& b) {
    return a.engine_tokens == b.engine_tokens && a.work == b.work;
}

// One engine's timings of the grid: [shape][step], and its passes' seconds.
struct EngineTimes {
    std::vector<std::vector<StepTimes>> by_shape;
    std::vector<double> pass_seconds;
    int64_t n_steps = 0;
    int64_t n_mismatched_steps = 0;
};

// Runs the grid n_passes times, on fresh prompts every pass (so that none
// is found in the prefix cache and the schedule repeats).
EngineTimes time_passes(engine::EngineCore& core, const ReplicaOptions& replica,
                        const std::vector<CalibrationShape>& grid, int32_t n_passes,
                        uint64_t seed) {
    EngineTimes times;
    times.by_shape.resize(grid.size());
    times.pass_seconds.assign(static_cast<size_t>(n_passes), 0.0);
    for (int32_t pass = 0; pass < n_passes; ++pass) {
        for (size_t s = 0; s < grid.size(); ++s) {
            const std::vector<MeasuredStep> steps =
                measure_workload(core, replica, grid[s], seed++);
            for (size_t i = 0; i < steps.size(); ++i) {
                const MeasuredStep& step = steps[i];
                ++times.n_steps;
                if (!step.simulated || step.work.n_tokens != step.engine_tokens ||
                    step.work.n_logit_rows != step.engine_logit_rows) {
                    ++times.n_mismatched_steps;
                    continue;
                }
                std::vector<StepTimes>& shape_steps = times.by_shape[s];
                if (i >= shape_steps.size()) shape_steps.resize(i + 1);
                StepTimes& step_times = shape_steps[i];
                if (step_times.seconds.empty()) {
                    step_times.step = step;
                } else if (!same_shape(step_times.step, step)) {
                    continue;
                }
                step_times.seconds.push_back(step.seconds);
                times.pass_seconds[static_cast<size_t>(pass)] += step.seconds;
            }
        }
    }
    return times;
}

}  // namespace

Calibration calibrate(std::span<engine::EngineCore* const> cores, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source,
                      int32_t n_passes) {
    LADDER_CHECK(!cores.empty(), "calibration without an engine");
    n_passes = std::max(n_passes, 1);
    // Each engine on its own thread, all at once: colocated replicas share the
    // host's memory bandwidth and caches, and so do their steps here. Each has
    // prompts of its own.
    std::vector<EngineTimes> engines(cores.size());
    std::vector<std::exception_ptr> failures(cores.size());
    {
        std::vector<std::jthread> threads;
        for (size_t e = 0; e < cores.size(); ++e) {
            threads.emplace_back([&, e] {
                try {
                    engines[e] = time_passes(*cores[e], replica, grid, n_passes, kSeed + 1000 * e);
                } catch (...) {
                    failures[e] = std::current_exception();
                }
            });
        }
    }
    for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
    }
    Calibration calibration;
    calibration.profile = profile_of_plan(cores[0]->kv_plan(), source);
    std::vector<std::vector<StepTimes>>& by_shape = engines[0].by_shape;
    for (const EngineTimes& times : engines) {
        calibration.n_steps += times.n_steps;
        calibration.n_mismatched_steps += times.n_mismatched_steps;
        calibration.pass_seconds.insert(calibration.pass_seconds.end(), times.pass_seconds.begin(),
                                        times.pass_seconds.end());
    }
    // The same grid, so the same steps: the other engines' pooled into the
    // first's where the shapes agree.
    for (size_t e = 1; e < engines.size(); ++e) {
        const EngineTimes& times = engines[e];
        for (size_t s = 0; s < grid.size(); ++s) {
            for (size_t i = 0; i < times.by_shape[s].size() && i < by_shape[s].size(); ++i) {
                const StepTimes& other = times.by_shape[s][i];
                StepTimes& first = by_shape[s][i];
                if (other.seconds.empty()) continue;
                if (first.seconds.empty()) {
                    first = other;
                } else if (same_shape(first.step, other.step)) {
                    first.seconds.insert(first.seconds.end(), other.seconds.begin(),
                                         other.seconds.end());
                }
            }
        }
    }
    std::vector<ObservedStep> observed;
    for (std::vector<StepTimes>& steps : by_shape) {
        for (StepTimes& times : steps) {
            if (times.seconds.empty()) continue;
            const size_t middle = (times.seconds.size() - 1) / 2;
            std::nth_element(times.seconds.begin(), times.seconds.begin() + middle,
                             times.seconds.end());
            observed.push_back({times.step.work, times.seconds[middle]});
        }
    }
    fit_step_costs(observed, calibration.profile);
    return calibration;
}

Calibration calibrate(engine::EngineCore& core, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source,
                      int32_t n_passes) {
    engine::EngineCore* const cores[] = {&core};
    return calibrate(cores, replica, grid, source, n_passes);
}

Calibration calibrate_from_traces(std::span<const TraceSummary> traces,
                                  const engine::KvCachePlan& plan, const std::string& source,
                                  const HeldPrices& held) {
    Calibration calibration;
    calibration.profile = profile_of_plan(plan, source);
    std::vector<ObservedStep> observed;
    for (const TraceSummary& trace : traces) {
        for (const TracedStep& step : trace.steps) {
            if (!step.has_shape) continue;
            ++calibration.n_steps;
            observed.push_back({step.work, step.dur_us * 1e-6});
        }
    }
    if (calibration.n_steps == 0) {
        util::fail(
            "the trace's steps carry no logit_rows and context (a trace of an older ladder)");
    }
    fit_step_costs(observed, calibration.profile, held);
    return calibration;
}

}  // namespace ladder::tools
