// The step cost model and the speculation policy: costs recovered from
// observed steps; drafting where a row is cheap beside the step, turned
// down to nothing where the step is compute-bound or drafts are rejected.
#include <gtest/gtest.h>

#include <vector>

#include "ladder/engine/speculation_policy.h"
#include "ladder/engine/step_cost_model.h"

namespace ladder::engine {
namespace {

// seconds = fixed + row x rows + context x positions attended.
StepCostModel fitted(double fixed, double row, double context) {
    StepCostModel model;
    for (int i = 0; i < 60; ++i) {
        const StepShape shape{1.0 + (i * 7) % 40, 100.0 * ((i * 13) % 50 + 1)};
        model.observe(shape, fixed + row * shape.n_rows + context * shape.n_context);
    }
    return model;
}

TEST(StepCostModel, recovers_the_parts_of_a_step) {
    const StepCostModel model = fitted(3e-3, 2e-4, 1e-8);
    ASSERT_TRUE(model.ready());
    EXPECT_NEAR(model.fixed_seconds(), 3e-3, 1e-9);
    EXPECT_NEAR(model.row_seconds(), 2e-4, 1e-10);
    EXPECT_NEAR(model.context_seconds(), 1e-8, 1e-13);
    EXPECT_NEAR(model.marginal_row_seconds(500.0), 2e-4 + 5e-6, 1e-10);
}

TEST(StepCostModel, recovers_a_logit_rows_cost_where_they_vary_apart_from_the_rows) {
    // Prompt chunks (one logit row each) and decodes (one per row), as a
    // calibration's grid runs them.
    StepCostModel model(1.0);
    for (int i = 0; i < 60; ++i) {
        const double rows = 1.0 + (i * 7) % 40;
        const double logit_rows = i % 2 == 0 ? rows : 1.0 + i % 3;
        const StepShape shape{rows, 100.0 * ((i * 13) % 50 + 1), logit_rows};
        model.observe(shape, 3e-3 + 2e-4 * rows + 1e-8 * shape.n_context + 5e-5 * logit_rows);
    }
    ASSERT_TRUE(model.ready());
    EXPECT_NEAR(model.fixed_seconds(), 3e-3, 1e-9);
    EXPECT_NEAR(model.row_seconds(), 2e-4, 1e-10);
    EXPECT_NEAR(model.context_seconds(), 1e-8, 1e-13);
    EXPECT_NEAR(model.logit_row_seconds(), 5e-5, 1e-10);
    EXPECT_NEAR(model.predict({10.0, 1000.0, 2.0}), 3e-3 + 2e-3 + 1e-5 + 1e-4, 1e-9);
}

TEST(StepCostModel, leaves_logit_rows_unfitted_where_they_always_equal_the_rows) {
    StepCostModel model(1.0);
    for (int i = 0; i < 60; ++i) {
        const StepShape shape{1.0 + (i * 7) % 40, 100.0 * ((i * 13) % 50 + 1), 1.0 + (i * 7) % 40};
        model.observe(shape, 3e-3 + 2e-4 * shape.n_rows + 1e-8 * shape.n_context);
    }
    EXPECT_FALSE(model.ready()) << "rows and logit rows cannot be told apart";
}

TEST(StepCostModel, a_part_that_comes_out_negative_is_left_out_and_the_rest_refitted) {
    // Steps that cost less than their rows' share would say (a negative
    // fixed part): setting that part to zero after the fit would price
    // every step 2 ms too dear; fitted without it, the rows absorb it and
    // the steps' total stays priced.
    StepCostModel model(1.0);
    double took = 0.0;
    std::vector<StepShape> shapes;
    for (int i = 0; i < 60; ++i) {
        const StepShape shape{20.0 + (i * 7) % 40, 100.0 * ((i * 13) % 50 + 1)};
        const double seconds = -2e-3 + 2e-4 * shape.n_rows;
        model.observe(shape, seconds);
        shapes.push_back(shape);
        took += seconds;
    }
    ASSERT_TRUE(model.ready());
    EXPECT_EQ(model.fixed_seconds(), 0.0);
    double priced = 0.0;
    for (const StepShape& shape : shapes) priced += model.predict(shape);
    EXPECT_NEAR(priced / took, 1.0, 0.05);  // 1.34 when the part is set to zero after the fit
}

TEST(StepCostModel, is_not_ready_while_steps_do_not_vary) {
    StepCostModel model;
    for (int i = 0; i < 50; ++i) model.observe({4.0, 400.0}, 5e-3);
    EXPECT_FALSE(model.ready()) << "one shape cannot tell the fixed part from the rows";
}

std::vector<int32_t> plan(const std::vector<DraftCandidate>& candidates, const StepCostModel& cost,
                          const StepCostModel* draft_cost = nullptr) {
    StepShape base;
    for (const DraftCandidate& c : candidates) {
        base.n_rows += 1.0;
        base.n_context += c.n_context;
    }
    std::vector<int32_t> lengths(candidates.size());
    SpeculationPolicy().plan(candidates, base, static_cast<double>(candidates.size()), cost,
                             draft_cost, lengths);
    return lengths;
}

TEST(SpeculationPolicy, drafts_in_full_at_small_batch_when_drafts_are_accepted) {
    // Decode of one sequence: 3 ms of weights, 0.2 ms a row.
    const StepCostModel cost = fitted(3e-3, 2e-4, 0.0);
    EXPECT_EQ(plan({{0.9, 500.0, 5}}, cost), (std::vector<int32_t>{5}));
    // Even a third of drafts accepted pays for a row this cheap.
    EXPECT_GT(plan({{0.35, 500.0, 5}}, cost)[0], 0);
    // A sequence whose drafts are all rejected drafts nothing.
    EXPECT_EQ(plan({{0.02, 500.0, 5}}, cost), (std::vector<int32_t>{0}));
}

TEST(SpeculationPolicy, turns_itself_off_when_the_step_is_compute_bound) {
    // 32 sequences at 2 ms a row: the weights' 3 ms are a small part of the step.
    const StepCostModel cost = fitted(3e-3, 2e-3, 0.0);
    const std::vector<DraftCandidate> batch(32, {0.6, 500.0, 5});
    for (const int32_t length : plan(batch, cost)) EXPECT_EQ(length, 0);
    // The same batch where rows are cheap drafts.
    const StepCostModel cheap = fitted(20e-3, 1e-4, 0.0);
    for (const int32_t length : plan(batch, cheap)) EXPECT_GT(length, 0);
}

TEST(SpeculationPolicy, favours_the_sequences_likelier_to_be_accepted) {
    const StepCostModel cost = fitted(3e-3, 4e-4, 0.0);
    const std::vector<int32_t> lengths = plan({{0.95, 100.0, 8}, {0.3, 100.0, 8}}, cost);
    EXPECT_GT(lengths[0], lengths[1]);
    EXPECT_LE(lengths[0], 8);
}

TEST(SpeculationPolicy, drafts_in_full_before_it_has_measured_anything) {
    const StepCostModel unmeasured;
    EXPECT_EQ(plan({{0.1, 10.0, 3}, {0.9, 10.0, 2}}, unmeasured), (std::vector<int32_t>{3, 2}));
}

TEST(SpeculationPolicy, a_draft_model_drafts_a_depth_for_all_sequences_at_once) {
    const StepCostModel target = fitted(8e-3, 2e-4, 0.0);
    const StepCostModel cheap_draft = fitted(2e-4, 1e-4, 0.0);
    const std::vector<int32_t> lengths =
        plan({{0.9, 100.0, 5}, {0.9, 100.0, 3}}, target, &cheap_draft);
    EXPECT_EQ(lengths, (std::vector<int32_t>{5, 3}));
    // A draft as slow as the target is never worth it.
    const StepCostModel slow_draft = fitted(8e-3, 2e-4, 0.0);
    EXPECT_EQ(plan({{0.6, 100.0, 5}}, target, &slow_draft), (std::vector<int32_t>{0}));
}

TEST(SpeculationPolicy, acceptance_follows_the_history) {
    AcceptanceHistory history;
    const double prior = SpeculationPolicy::acceptance(history);
    for (int i = 0; i < 20; ++i) SpeculationPolicy::record(history, 5, 5);
    EXPECT_GT(SpeculationPolicy::acceptance(history), 0.95);
    for (int i = 0; i < 20; ++i) SpeculationPolicy::record(history, 5, 0);
    EXPECT_LT(SpeculationPolicy::acceptance(history), 0.15);
    // Idle steps bring it back towards the prior, so the sequence tries again.
    for (int i = 0; i < 400; ++i) SpeculationPolicy::record_idle(history);
    EXPECT_NEAR(SpeculationPolicy::acceptance(history), prior, 0.01);
}

}  // namespace
}  // namespace ladder::engine
