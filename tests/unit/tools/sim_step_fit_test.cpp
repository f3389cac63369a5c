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
                steps.push_back({{rows, context, 0.0, 0.0, logit_rows},
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
    EXPECT_NEAR(profile.step_seconds({4, 100.0, 0.0, 0.0, 4}), true_rows_seconds(4) + 2e-4 + 0.0024,
                1e-9);
    // Steps with one kind of context give one price.
    EXPECT_FALSE(profile.per_decode_context_s.has_value());
    EXPECT_EQ(profile.decode_context_seconds(), profile.per_context_s);
}

// Steps of decodes (one row a sequence, each streaming its own KV), of
// prompt chunks over a context, and of both at once, whose attention costs
// 3 us a position for a decode row and 1 us for a prompt row.
std::vector<ObservedStep> steps_of_two_context_prices() {
    std::vector<ObservedStep> steps;
    const double per_prompt_s = 1e-6;
    const double per_decode_s = 3e-6;
    for (int64_t decodes : {0, 1, 2, 4, 8, 16}) {
        for (int64_t prompt_rows : {0, 3, 60, 250}) {
            for (double length : {20.0, 700.0, 2000.0}) {
                const int64_t rows = decodes + prompt_rows;
                if (rows == 0) continue;
                const double decode_context = static_cast<double>(decodes) * length;
                const double prompt_context = static_cast<double>(prompt_rows) * length;
                const int64_t logit_rows = decodes + (prompt_rows > 0 ? 1 : 0);
                steps.push_back(
                    {{rows, decode_context + prompt_context, decode_context, 0.0, logit_rows},
                     true_rows_seconds(rows) + per_prompt_s * prompt_context +
                         per_decode_s * decode_context + 0.0004 * static_cast<double>(logit_rows)});
            }
        }
    }
    return steps;
}

TEST(StepCostFit, PromptAndDecodeRowsGetTheirOwnContextPrice) {
    StepProfile profile;
    fit_step_costs(steps_of_two_context_prices(), profile);
    EXPECT_NEAR(profile.per_context_s, 1e-6, 1e-12);
    ASSERT_TRUE(profile.per_decode_context_s.has_value());
    EXPECT_NEAR(*profile.per_decode_context_s, 3e-6, 1e-12);
    EXPECT_NEAR(profile.per_logit_row_s, 0.0004, 1e-9);
    // A step of 4 decodes at 1,000 positions and a 60-row prompt chunk over 500.
    EXPECT_NEAR(profile.step_seconds({64, 4000.0 + 30000.0, 4000.0, 0.0, 5}),
                true_rows_seconds(64) + 0.012 + 0.030 + 0.002, 1e-9);
}

// A grid's prices of the steps above: the logit row's as given, context 1 us
// for a prompt row and 3 us for a decode row.
HeldPrices grid_prices(double per_logit_row_s, bool attention) {
    StepProfile grid;
    grid.per_logit_row_s = per_logit_row_s;
    grid.per_context_s = 1e-6;
    grid.per_decode_context_s = 3e-6;
    HeldPrices held;
    held.hold_logit_rows_of(grid);
    if (attention) held.hold_attention_of(grid);
    return held;
}

// A price held from elsewhere (a grid calibration's) is the profile's, and
// the curve and the other parts are fitted to what it leaves of each step.
TEST(StepCostFit, AHeldLogitPriceIsKeptAndTheRestFitted) {
    StepProfile profile;
    fit_step_costs(steps_of_two_context_prices(), profile, grid_prices(0.0004, false));
    EXPECT_EQ(profile.per_logit_row_s, 0.0004);
    EXPECT_NEAR(profile.per_context_s, 1e-6, 1e-12);
    ASSERT_TRUE(profile.per_decode_context_s.has_value());
    EXPECT_NEAR(*profile.per_decode_context_s, 3e-6, 1e-12);
    for (const RowCost& cost : profile.row_costs)
        EXPECT_NEAR(cost.seconds, true_rows_seconds(cost.n_rows), 1e-9) << cost.n_rows;
}

// Decode batches alone (a logit row per row, as a served trace's) cannot
// tell the logit price from the curve: the curve takes whatever of it is
// not held, and the steps are still priced as measured. Held attention
// prices are the profile's as they are.
TEST(StepCostFit, TheCurveCarriesWhatAHeldLogitPriceLeaves) {
    std::vector<ObservedStep> steps;
    for (const ObservedStep& step : steps_of_two_context_prices()) {
        if (step.work.n_context == step.work.n_decode_context) steps.push_back(step);
    }
    const HeldPrices held = grid_prices(0.0002, true);
    StepProfile profile;
    fit_step_costs(steps, profile, held);
    EXPECT_EQ(profile.per_logit_row_s, 0.0002);
    EXPECT_EQ(profile.per_context_s, 1e-6);
    ASSERT_TRUE(profile.per_decode_context_s.has_value());
    EXPECT_EQ(*profile.per_decode_context_s, 3e-6);
    EXPECT_EQ(profile.per_kv_read_s, 0.0);
    for (const RowCost& cost : profile.row_costs) {
        EXPECT_NEAR(cost.seconds,
                    true_rows_seconds(cost.n_rows) + 0.0002 * static_cast<double>(cost.n_rows),
                    1e-9)
            << cost.n_rows;
    }
    for (const ObservedStep& step : steps)
        EXPECT_NEAR(profile.step_seconds(step.work), step.seconds, 1e-9);
}

// Decodes over a shared prefix (one read of it for the step) and alone (a
// read each), where a KV position read costs 1.5 us beside a decode row's 1
// (no logit rows: every decode octave's would be its row count, which the
// curve cannot be told from).
TEST(StepCostFit, TheKvReadIsPricedApartFromTheDecodeRowsContext) {
    std::vector<ObservedStep> steps;
    for (int64_t decodes : {1, 2, 4, 8, 16}) {
        for (double length : {20.0, 500.0, 1000.0, 2000.0}) {
            for (bool shared : {false, true}) {
                const double context = static_cast<double>(decodes) * length;
                const double read = shared ? length + 16.0 * static_cast<double>(decodes) : context;
                steps.push_back({{decodes, context, context, read, 0},
                                 true_rows_seconds(decodes) + 1e-6 * context + 1.5e-6 * read});
            }
        }
    }
    for (int64_t rows : {32, 64, 128}) {  // prompts: one read of their context
        for (double past : {0.0, 1000.0}) {
            const double context =
                static_cast<double>(rows) * past + static_cast<double>(rows * (rows + 1) / 2);
            const double read = past + static_cast<double>(rows);
            steps.push_back({{rows, context, 0.0, read, 0},
                             true_rows_seconds(rows) + 0.5e-6 * context + 1.5e-6 * read});
        }
    }
    StepProfile profile;
    fit_step_costs(steps, profile);
    EXPECT_NEAR(profile.per_context_s, 0.5e-6, 1e-12);
    ASSERT_TRUE(profile.per_decode_context_s.has_value());
    EXPECT_NEAR(*profile.per_decode_context_s, 1e-6, 1e-12);
    EXPECT_NEAR(profile.per_kv_read_s, 1.5e-6, 1e-12);
}

TEST(StepCostFit, ADecodePriceBelowZeroLeavesOneContextPrice) {
    // Decodes that cost less the longer their context: no decode price
    // explains it, so every row gets the one price the steps give.
    std::vector<ObservedStep> steps = steps_of_two_context_prices();
    for (ObservedStep& step : steps) step.seconds -= 3.2e-6 * step.work.n_decode_context;
    StepProfile profile;
    fit_step_costs(steps, profile);
    EXPECT_FALSE(profile.per_decode_context_s.has_value());
    EXPECT_GE(profile.per_context_s, 0.0);
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
        steps.push_back({{rows, 0.0, 0.0, 0.0, 1}, 0.010 + 0.001 * static_cast<double>(rows)});
        steps.push_back({{rows, 0.0, 0.0, 0.0, rows}, 0.009 + 0.001 * static_cast<double>(rows)});
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
    steps.push_back({{2, 50000.0, 0.0, 0.0, 2}, 0.01});
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
    const std::vector<ObservedStep> steps = {{{4, 100.0, 0.0, 0.0, 4}, 0.01},
                                             {{4, 200.0, 0.0, 0.0, 4}, 0.011}};
    EXPECT_THROW(fit_step_costs(steps, profile), util::InputError);
}

}  // namespace
}  // namespace ladder::tools
