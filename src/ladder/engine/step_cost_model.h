// What a forward step costs, learnt from the steps the engine runs:
// seconds ~ fixed + per_row x rows + per_context x (sum over rows of the
// positions each row attends to) + per_logit_row x (rows whose next-token
// logits are computed). The fixed part is reading the weights (decode's
// bandwidth bound), per_row the matrix products of one more row, per_context
// its attention over the KV cache, per_logit_row the LM head's product and
// the sampling that a prompt row before the last skips. Least squares with
// exponential forgetting, so the model follows the machine's load.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ladder::engine {

struct StepShape {
    double n_rows = 0.0;     // tokens computed in the step
    double n_context = 0.0;  // sum over rows of the positions attended (position + 1)
    // Rows whose logits are computed. Left 0 by an observer that does not
    // count them: that part is then not fitted, and per_row carries it.
    double n_logit_rows = 0.0;
};

class StepCostModel {
public:
    // forgetting: the weight of an observation after each later one.
    explicit StepCostModel(double forgetting = 0.98);

    void observe(StepShape shape, double seconds);
    // False until the observations vary enough to tell the parts apart.
    bool ready() const { return ready_; }
    double fixed_seconds() const { return coefficients_[0]; }
    double row_seconds() const { return coefficients_[1]; }
    double context_seconds() const { return coefficients_[2]; }
    double logit_row_seconds() const { return coefficients_[3]; }
    double predict(StepShape shape) const {
        return fixed_seconds() + row_seconds() * shape.n_rows +
               context_seconds() * shape.n_context + logit_row_seconds() * shape.n_logit_rows;
    }
    // One more row attending to n_context positions (without its logits:
    // an observer of speculative steps counts none, and row_seconds has them).
    double marginal_row_seconds(double n_context) const {
        return row_seconds() + context_seconds() * n_context;
    }

private:
    static constexpr size_t kParts = 4;
    void solve();
    bool solve_parts(std::span<const size_t> parts, std::array<double, kParts>& fit) const;

    double forgetting_;
    // Weighted sums of x x^T and x y for x = (1, rows, context, logit rows), y = seconds.
    std::array<std::array<double, kParts>, kParts> xx_{};
    std::array<double, kParts> xy_{};
    std::array<double, kParts> coefficients_{};
    int64_t n_observed_ = 0;
    bool ready_ = false;
};

}  // namespace ladder::engine
