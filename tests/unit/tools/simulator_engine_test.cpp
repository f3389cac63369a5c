// The simulator's hand-checked cases through the real engine: the same
// workload must take the same steps with the same tokens in each, because
// both run the engine's scheduler over the same KV plan.
#include <gtest/gtest.h>

#include <filesystem>

#include "ladder/engine/engine_core.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/tools/sim_calibrate.h"
#include "ladder/util/thread_pool.h"

namespace ladder::tools {
namespace {

class SimulatorAgainstEngine : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const auto path =
            std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
        if (std::filesystem::exists(path)) {
            bundle_ =
                std::make_unique<engine::ModelBundle>(engine::load_model_bundle(path.string()));
            pool_ = std::make_unique<util::ThreadPool>(1);
        }
    }
    void SetUp() override {
        if (!bundle_) GTEST_SKIP() << "the SmolLM2 model is not fetched (make models)";
    }
    // Engine and simulator steps of one workload: their token counts, and
    // the same logit rows in each.
    static void expect_same_steps(engine::EngineConfig config, const CalibrationShape& shape,
                                  std::vector<int32_t> expected) {
        engine::EngineCore core(*bundle_->model, *bundle_->tokenizer, *pool_, config);
        ReplicaOptions replica{config.max_num_seqs, config.max_num_batched_tokens,
                               config.prefix_caching};
        const std::vector<MeasuredStep> steps = measure_workload(core, replica, shape, 7);
        std::vector<int32_t> engine_tokens;
        std::vector<int32_t> simulated_tokens;
        for (const MeasuredStep& step : steps) {
            engine_tokens.push_back(step.engine_tokens);
            simulated_tokens.push_back(step.simulated ? static_cast<int32_t>(step.work.n_tokens)
                                                      : -1);
            EXPECT_EQ(step.work.n_logit_rows, step.engine_logit_rows)
                << "step " << engine_tokens.size();
        }
        EXPECT_EQ(engine_tokens, expected);
        EXPECT_EQ(simulated_tokens, expected);
    }
    static inline std::unique_ptr<engine::ModelBundle> bundle_;
    static inline std::unique_ptr<util::ThreadPool> pool_;
};

constexpr int64_t kBlockBytes = int64_t{23040} * 4;  // SmolLM2, 4-token blocks, F16

TEST_F(SimulatorAgainstEngine, OneRequest) {
    expect_same_steps({.block_size = 4}, {1, 8, 3}, {8, 1, 1});
}

TEST_F(SimulatorAgainstEngine, TwoRequestsShareTheBudget) {
    expect_same_steps({.block_size = 4, .max_num_seqs = 2, .max_num_batched_tokens = 6}, {2, 8, 2},
                      {6, 6, 5, 1});
}

TEST_F(SimulatorAgainstEngine, Preemption) {
    engine::EngineConfig config{.block_size = 4, .prefix_caching = false};
    config.kv_cache_bytes = 3 * kBlockBytes;
    expect_same_steps(config, {2, 4, 5}, {8, 1, 1, 1, 1, 5, 1, 1, 1});
}

// Every pass runs the same steps on fresh prompts (none found in the prefix
// cache, or the schedule would change), and each is timed.
TEST_F(SimulatorAgainstEngine, CalibrationPassesRepeatTheSameSteps) {
    engine::EngineConfig config{.block_size = 4};
    const std::vector<CalibrationShape> grid = {{1, 8, 6}, {4, 8, 6}, {1, 32, 4}, {2, 64, 4}};
    const auto run = [&](int32_t n_passes) {
        engine::EngineCore core(*bundle_->model, *bundle_->tokenizer, *pool_, config);
        ReplicaOptions replica{config.max_num_seqs, config.max_num_batched_tokens,
                               config.prefix_caching};
        return calibrate(core, replica, grid, "test", n_passes);
    };
    const Calibration once = run(1);
    const Calibration thrice = run(3);
    EXPECT_EQ(once.n_mismatched_steps, 0);
    EXPECT_EQ(thrice.n_mismatched_steps, 0);
    EXPECT_EQ(thrice.n_steps, 3 * once.n_steps);
    ASSERT_EQ(thrice.pass_seconds.size(), 3u);
    for (double seconds : thrice.pass_seconds) EXPECT_GT(seconds, 0.0);
    ASSERT_FALSE(thrice.profile.row_costs.empty());
    for (const RowCost& cost : thrice.profile.row_costs) EXPECT_GT(cost.seconds, 0.0);
}

// Two engines (each its own model, as two servers have) run the grid at
// once; every step of both is timed and fitted, and the schedule is the
// simulator's in each.
TEST_F(SimulatorAgainstEngine, EnginesCalibratedAtOnceTimeEveryStepOfEach) {
    engine::EngineConfig config{.block_size = 4};
    const std::vector<CalibrationShape> grid = {{1, 8, 6}, {4, 8, 6}, {1, 32, 4}, {2, 64, 4}};
    ReplicaOptions replica{config.max_num_seqs, config.max_num_batched_tokens,
                           config.prefix_caching};
    const auto path =
        std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
    engine::ModelBundle second_bundle = engine::load_model_bundle(path.string());
    util::ThreadPool second_pool(1);
    engine::EngineCore first(*bundle_->model, *bundle_->tokenizer, *pool_, config);
    engine::EngineCore second(*second_bundle.model, *second_bundle.tokenizer, second_pool, config);
    engine::EngineCore* const cores[] = {&first, &second};
    const Calibration both = calibrate(cores, replica, grid, "test", 2);

    engine::EngineCore alone(*bundle_->model, *bundle_->tokenizer, *pool_, config);
    const Calibration one = calibrate(alone, replica, grid, "test", 2);
    EXPECT_EQ(both.n_mismatched_steps, 0);
    EXPECT_EQ(both.n_steps, 2 * one.n_steps);
    ASSERT_EQ(both.pass_seconds.size(), 4u);  // each engine's two passes
    for (double seconds : both.pass_seconds) EXPECT_GT(seconds, 0.0);
    ASSERT_FALSE(both.profile.row_costs.empty());
    for (const RowCost& cost : both.profile.row_costs) EXPECT_GT(cost.seconds, 0.0);
}

}  // namespace
}  // namespace ladder::tools
