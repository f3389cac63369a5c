#include "ladder/tools/sim_calibrate.h"

#include <random>

#include "ladder/engine/step_cost_model.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/error.h"

namespace ladder::tools {

std::vector<CalibrationShape> default_calibration_grid() {
    return {{1, 16, 32}, {4, 16, 32}, {16, 16, 32}, {1, 512, 32},         {4, 512, 16},
            {1, 64, 4},  {1, 256, 4}, {1, 1024, 4}, {16, 1024, 16, true}, {8, 2048, 8, true}};
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
            step.simulated_tokens = simulated.steps[steps.size()].n_tokens;
            step.n_context = simulated.steps[steps.size()].n_context;
            step.n_logit_rows = simulated.steps[steps.size()].n_logit_rows;
        }
        steps.push_back(step);
    }
    return steps;
}

Calibration calibrate(engine::EngineCore& core, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source) {
    const engine::KvCachePlan& plan = core.kv_plan();
    Calibration calibration;
    StepProfile& profile = calibration.profile;
    profile.source = source;
    profile.block_size = plan.block_size;
    profile.n_kv_blocks = plan.n_blocks;
    // Every layer's K and V (a sliding-window group's too) over the tokens
    // the cache holds: what a token's blocks weigh in the tiers below memory.
    if (plan.n_tokens() > 0) {
        profile.kv_bytes_per_token =
            static_cast<double>(plan.bytes) / static_cast<double>(plan.n_tokens());
    }
    engine::StepCostModel fit(1.0);
    uint64_t seed = 20261201;
    for (const CalibrationShape& shape : grid) {
        for (const MeasuredStep& step : measure_workload(core, replica, shape, seed++)) {
            ++calibration.n_steps;
            if (step.simulated_tokens != step.engine_tokens ||
                step.n_logit_rows != step.engine_logit_rows) {
                ++calibration.n_mismatched_steps;
                continue;
            }
            fit.observe({static_cast<double>(step.engine_tokens), step.n_context,
                         static_cast<double>(step.n_logit_rows)},
                        step.seconds);
        }
    }
    if (!fit.ready()) util::fail("calibration: the measured steps did not give a fit");
    profile.fixed_s = fit.fixed_seconds();
    profile.per_token_s = fit.row_seconds();
    profile.per_context_s = fit.context_seconds();
    profile.per_logit_row_s = fit.logit_row_seconds();
    return calibration;
}

}  // namespace ladder::tools
