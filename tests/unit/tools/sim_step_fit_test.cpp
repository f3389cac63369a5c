// The fit of a measured profile: a rows curve with a point near each power
// of two, plus context and logit rows, recovered from steps that follow
// known costs.
#include <gtest/gtest.h>

#include <vector>

#include "ladder/tools/sim_step_fit.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

// A curve with a kink, as the engine's has where its matrix kernels change:
// a second row almost free on the weights' read, then 2.5 ms a row.
double true_rows_seconds(int64_t rows) {
    if (rows <= 2) return 0.007 + 0.0005 * static_cast<double>(rows - 1);
    return 0.0075 + 0.0025 * static_cast<double>(rows - 2);
}

std::vector<ObservedStep> steps_of_known_costs(const std::vector<int64_t>& row_counts,
                                               double per_context_s, double per_logit_row_s) {
    std::vector<ObservedStep> steps;
    for (int64_t rows : row_counts) {
        for (int64_t logit_rows : {int64_t{1}, rows}) {
            for (double context : {10.0, 3000.0, 50000.0}) {
                steps.push_back({rows, context, logit_rows,
                                 true_rows_seconds(rows) + per_context_s * context +
                                     per_logit_row_s * static_cast<double>(logit_rows)});
            }
        }
    }
    return steps;
}

TEST(StepCostFit, RecoversTheRowsCurveAndTheOtherParts) {
    const std::vector<int64_t> counts = {1, 2, 3, 4, 8, 16, 32, 64, 128, 256};
    StepProfile profile;
    fit_step_costs(steps_of_known_costs(counts, 2e-6, 0.0006), profile);
    ASSERT_EQ(profile.row_costs.size(), 9u);  // 1, 2, 4, ..., 256
    for (const RowCost& cost : profile.row_costs)
        EXPECT_NEAR(cost.seconds, true_rows_seconds(cost.n_rows), 1e-9) << cost.n_rows;
    EXPECT_NEAR(profile.per_context_s, 2e-6, 1e-12);
    EXPECT_NEAR(profile.per_logit_row_s, 0.0006, 1e-9);
    // Between points and past the last one the curve is read linearly.
    EXPECT_NEAR(profile.rows_seconds(3), true_rows_seconds(3), 1e-9);
    EXPECT_NEAR(profile.rows_seconds(512), true_rows_seconds(512), 1e-9);
    EXPECT_NEAR(profile.step_seconds(4, 100.0, 4), true_rows_seconds(4) + 2e-4 + 0.0024, 1e-9);
}

TEST(StepCostFit, OnePointAtTheRowCountNearestEachOctavesPowerOfTwo) {
    std::vector<ObservedStep> steps = steps_of_known_costs({1, 4, 19, 100}, 1e-6, 0.0005);
    // Octave 4 (12 to 22 rows) has more 19-row steps than 16-row ones; 16 is
    // its point all the same.
    for (const ObservedStep& step : steps_of_known_costs({16, 19, 19}, 1e-6, 0.0005))
        steps.push_back(step);
    StepProfile profile;
    fit_step_costs(steps, profile);
    std::vector<int64_t> points;
    for (const RowCost& cost : profile.row_costs) points.push_back(cost.n_rows);
    EXPECT_EQ(points, (std::vector<int64_t>{1, 4, 16, 100}));
    for (const RowCost& cost : profile.row_costs)
        EXPECT_NEAR(cost.seconds, true_rows_seconds(cost.n_rows), 1e-9) << cost.n_rows;
}

TEST(StepCostFit, APartThatFitsBelowZeroIsLeftOut) {
    // Dearer with fewer logit rows: no cost a logit row could have explains it.
    std::vector<ObservedStep> steps;
    for (int64_t rows : {1, 2, 4, 8}) {
        steps.push_back({rows, 0.0, 1, 0.010 + 0.001 * static_cast<double>(rows)});
        steps.push_back({rows, 0.0, rows, 0.009 + 0.001 * static_cast<double>(rows)});
    }
    StepProfile profile;
    fit_step_costs(steps, profile);
    EXPECT_EQ(profile.per_logit_row_s, 0.0);
    EXPECT_EQ(profile.per_context_s, 0.0);
    for (const RowCost& cost : profile.row_costs) EXPECT_GT(cost.seconds, 0.0);
}

TEST(StepCostFit, APointTheStepsDoNotPinLeavesTheCurve) {
    // One 2-row step over a long context, measured in less time than its
    // attention alone costs (noise): it alone pins the 2-row point, which
    // fits below zero; the curve then runs from 1 row to 4.
    std::vector<ObservedStep> steps = steps_of_known_costs({1, 4, 8}, 2e-6, 0.0);
    steps.push_back({2, 50000.0, 2, 0.01});
    StepProfile profile;
    fit_step_costs(steps, profile);
    std::vector<int64_t> points;
    for (const RowCost& cost : profile.row_costs) {
        points.push_back(cost.n_rows);
        EXPECT_GT(cost.seconds, 0.0);
    }
    EXPECT_EQ(points, (std::vector<int64_t>{1, 4, 8}));
}

TEST(StepCostFit, OneRowCountCannotGiveACurve) {
    StepProfile profile;
    const std::vector<ObservedStep> steps = {{4, 100.0, 4, 0.01}, {4, 200.0, 4, 0.011}};
    EXPECT_THROW(fit_step_costs(steps, profile), util::InputError);
}

}  // namespace
}  // namespace ladder::tools
