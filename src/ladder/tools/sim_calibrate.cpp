#include "ladder/tools/sim_calibrate.h"

#include <algorithm>
#include <random>

#include "ladder/tools/sim_step_fit.h"
#include "ladder/tools/simulator.h"
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

    // Ids far from any caller's.
    static uint64_t next_id = uint64_t{1} << 40;
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

// Step i of a grid shape as first measured, and its seconds in every pass
// where the engine took that same step.
struct StepTimes {
    MeasuredStep step;
    std::vector<double> seconds;
};

bool same_shape(const MeasuredStep& a, const MeasuredStep& b) {
    return a.engine_tokens == b.engine_tokens && a.work == b.work;
}

// Runs the grid n_passes times, on fresh prompts every pass (so that none
// is found in the prefix cache and the schedule repeats); [shape][step].
std::vector<std::vector<StepTimes>> time_passes(engine::EngineCore& core,
                                                const ReplicaOptions& replica,
                                                const std::vector<CalibrationShape>& grid,
                                                int32_t n_passes, Calibration& calibration) {
    std::vector<std::vector<StepTimes>> by_shape(grid.size());
    calibration.pass_seconds.assign(static_cast<size_t>(n_passes), 0.0);
    uint64_t seed = 20261201;
    for (int32_t pass = 0; pass < n_passes; ++pass) {
        for (size_t s = 0; s < grid.size(); ++s) {
            const std::vector<MeasuredStep> steps =
                measure_workload(core, replica, grid[s], seed++);
            for (size_t i = 0; i < steps.size(); ++i) {
                const MeasuredStep& step = steps[i];
                ++calibration.n_steps;
                if (!step.simulated || step.work.n_tokens != step.engine_tokens ||
                    step.work.n_logit_rows != step.engine_logit_rows) {
                    ++calibration.n_mismatched_steps;
                    continue;
                }
                if (i >= by_shape[s].size()) by_shape[s].resize(i + 1);
                StepTimes& times = by_shape[s][i];
                if (times.seconds.empty()) {
                    times.step = step;
                } else if (!same_shape(times.step, step)) {
                    continue;
                }
                times.seconds.push_back(step.seconds);
                calibration.pass_seconds[static_cast<size_t>(pass)] += step.seconds;
            }
        }
    }
    return by_shape;
}

}  // namespace

Calibration calibrate(engine::EngineCore& core, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source,
                      int32_t n_passes) {
    Calibration calibration;
    calibration.profile = profile_of_plan(core.kv_plan(), source);
    std::vector<ObservedStep> observed;
    for (std::vector<StepTimes>& steps :
         time_passes(core, replica, grid, std::max(n_passes, 1), calibration)) {
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

Calibration calibrate_from_trace(const TraceSummary& trace, const engine::KvCachePlan& plan,
                                 const std::string& source) {
    Calibration calibration;
    calibration.profile = profile_of_plan(plan, source);
    std::vector<ObservedStep> observed;
    for (const TracedStep& step : trace.steps) {
        if (!step.has_shape) continue;
        ++calibration.n_steps;
        observed.push_back({step.work, step.dur_us * 1e-6});
    }
    if (calibration.n_steps == 0) {
        util::fail(
            "the trace's steps carry no logit_rows and context (a trace of an older ladder)");
    }
    fit_step_costs(observed, calibration.profile);
    return calibration;
}

}  // namespace ladder::tools
