// `ladder simulate calibrate --from-trace`: served runs' steps, fitted.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "ladder/tools/sim_calibrate.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

engine::KvCachePlan small_plan() {
    engine::KvCachePlan plan;
    plan.block_size = 16;
    plan.n_blocks = 100;
    plan.bytes = int64_t{100} * 16 * 1000;
    return plan;
}

// Steps of many shapes whose durations follow known costs exactly: the
// one-row steps are decodes, whose context costs 3 us a position against a
// prompt row's 2.
TraceSummary trace_of_known_costs() {
    TraceSummary trace;
    for (int64_t tokens : {1, 4, 16, 64, 256}) {
        for (int64_t logit_rows : {int64_t{1}, tokens}) {
            for (double context : {100.0, 5000.0, 40000.0}) {
                const double decode_context = tokens == 1 ? context : 0.0;
                const double seconds = 0.003 + 0.005 * tokens + 2e-6 * (context - decode_context) +
                                       3e-6 * decode_context + 0.001 * logit_rows;
                trace.steps.push_back(
                    {seconds * 1e6, {tokens, context, decode_context, 0.0, logit_rows}, true});
            }
        }
    }
    return trace;
}

Calibration calibrate_one(const TraceSummary& trace) {
    return calibrate_from_traces(std::span(&trace, 1), small_plan(), "a trace");
}

TEST(CalibrateFromTrace, RecoversTheCostsOfTheServedSteps) {
    const Calibration calibration = calibrate_one(trace_of_known_costs());
    const StepProfile& profile = calibration.profile;
    EXPECT_EQ(calibration.n_steps, 30);
    // A point of the rows curve at each row count the trace has.
    ASSERT_EQ(profile.row_costs.size(), 5u);
    for (const RowCost& cost : profile.row_costs) {
        EXPECT_NEAR(cost.seconds, 0.003 + 0.005 * static_cast<double>(cost.n_rows), 1e-9)
            << cost.n_rows;
    }
    EXPECT_NEAR(profile.per_context_s, 2e-6, 1e-12);
    ASSERT_TRUE(profile.per_decode_context_s.has_value());
    EXPECT_NEAR(*profile.per_decode_context_s, 3e-6, 1e-12);
    EXPECT_NEAR(profile.per_logit_row_s, 0.001, 1e-9);
    EXPECT_EQ(profile.source, "a trace");
    EXPECT_EQ(profile.block_size, 16);
    EXPECT_EQ(profile.n_kv_blocks, 100);
    EXPECT_DOUBLE_EQ(profile.kv_bytes_per_token, 1000.0);
}

TEST(CalibrateFromTrace, StepsWithoutAShapeAreLeftOut) {
    TraceSummary trace = trace_of_known_costs();
    // An older trace's step: tokens but no logit rows or context, and a duration
    // that would pull the fit if it were counted.
    trace.steps.push_back({1e6, {16, 0.0, 0.0, 0.0, 0}, false});
    const Calibration calibration = calibrate_one(trace);
    EXPECT_EQ(calibration.n_steps, 30);
    EXPECT_NEAR(calibration.profile.rows_seconds(16), 0.003 + 0.005 * 16, 1e-9);
}

TEST(CalibrateFromTrace, ATraceWithoutShapesIsAnError) {
    TraceSummary trace;
    trace.steps.push_back({1000.0, {16, 0.0, 0.0, 0.0, 0}, false});
    EXPECT_THROW(calibrate_one(trace), util::InputError);
    // Nor does a second trace without shapes make a fleet's calibration possible.
    const std::vector<TraceSummary> fleet(2, trace);
    EXPECT_THROW(calibrate_from_traces(fleet, small_plan(), "two traces"), util::InputError);
}

// A fleet's replicas each write a trace: the fit pools their steps, so
// two halves of one run's steps give the profile the whole run gives.
TEST(CalibrateFromTrace, AFleetsTracesArePooled) {
    const TraceSummary whole = trace_of_known_costs();
    std::vector<TraceSummary> replicas(2);
    for (size_t i = 0; i < whole.steps.size(); ++i) replicas[i % 2].steps.push_back(whole.steps[i]);
    const Calibration pooled = calibrate_from_traces(replicas, small_plan(), "two traces");
    const Calibration single = calibrate_one(whole);
    EXPECT_EQ(pooled.n_steps, 30);
    ASSERT_EQ(pooled.profile.row_costs.size(), single.profile.row_costs.size());
    for (size_t i = 0; i < pooled.profile.row_costs.size(); ++i)
        EXPECT_NEAR(pooled.profile.row_costs[i].seconds, single.profile.row_costs[i].seconds, 1e-9);
    EXPECT_NEAR(pooled.profile.per_context_s, single.profile.per_context_s, 1e-12);
    EXPECT_NEAR(pooled.profile.per_logit_row_s, single.profile.per_logit_row_s, 1e-9);
}

}  // namespace
}  // namespace ladder::tools
