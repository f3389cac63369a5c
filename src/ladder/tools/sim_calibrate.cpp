#include "ladder/tools/sim_calibrate.h"

#include <random>

#include "ladder/engine/step_cost_model.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/error.h"

namespace ladder::tools {

std::vector<CalibrationShape> default_calibration_grid() {
    return {{1, 16, 32},  {4, 16, 32}, {16, 16, 32}, {1, 512, 32},
            {4, 512, 16}, {1, 64, 4},  {1, 256, 4},  {1, 1024, 4}};
}

Calibration calibrate(engine::EngineCore& core, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source) {
    const engine::KvCachePlan& plan = core.kv_plan();
    StepProfile profile;
    profile.source = source;
    profile.block_size = plan.block_size;
    profile.n_kv_blocks = plan.n_blocks;
    // The simulator prices nothing here; it only replays the schedule.
    StepProfile replay = profile;
    replay.fixed_s = 1.0;

    engine::StepCostModel fit(1.0);
    Calibration calibration;
    std::mt19937 random(20261201);
    uint64_t next_id = uint64_t{1} << 40;  // apart from any caller's ids
    for (const CalibrationShape& shape : grid) {
        std::vector<SimRequest> requests;
        for (int32_t i = 0; i < shape.n_requests; ++i) {
            SimRequest request{i, 0.0, {}, shape.output_len};
            for (int32_t t = 0; t < shape.prompt_len; ++t)
                request.prompt.push_back(static_cast<int32_t>(random() % 1000) + 10);
            requests.push_back(std::move(request));
        }
        SimulationOptions options;
        options.profile = replay;
        options.replica = replica;
        const SimulationResult simulated = simulate(requests, options, true);

        for (const SimRequest& request : requests) {
            engine::RequestParams params;
            params.prompt = request.prompt;
            params.max_tokens = request.output_len;
            params.ignore_eos = true;
            params.sampling.temperature = 0.0f;
            core.add_request(engine::RequestId{next_id++}, std::move(params),
                             [](engine::RequestOutput&&) {});
        }
        size_t step = 0;
        while (core.has_work()) {
            core.step();
            const engine::EngineStats& stats = core.stats();
            if (step >= simulated.steps.size() ||
                simulated.steps[step].n_tokens != stats.last_step_tokens) {
                ++calibration.n_mismatched_steps;
            } else {
                fit.observe(
                    {static_cast<double>(stats.last_step_tokens), simulated.steps[step].n_context},
                    stats.last_step_seconds);
            }
            ++step;
            ++calibration.n_steps;
        }
    }
    if (!fit.ready()) util::fail("calibration: the measured steps did not give a fit");
    profile.fixed_s = fit.fixed_seconds();
    profile.per_token_s = fit.row_seconds();
    profile.per_context_s = fit.context_seconds();
    calibration.profile = profile;
    return calibration;
}

}  // namespace ladder::tools
