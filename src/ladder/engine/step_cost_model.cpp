#include "ladder/engine/step_cost_model.h"

#include <algorithm>
#include <cmath>

namespace ladder::engine {

StepCostModel::StepCostModel(double forgetting) : forgetting_(forgetting) {}

void StepCostModel::observe(StepShape shape, double seconds) {
    if (!(seconds > 0.0) || !std::isfinite(seconds)) return;
    const std::array<double, kParts> x = {1.0, shape.n_rows, shape.n_context, shape.n_logit_rows};
    for (size_t i = 0; i < kParts; ++i) {
        for (size_t j = 0; j < kParts; ++j) xx_[i][j] = forgetting_ * xx_[i][j] + x[i] * x[j];
        xy_[i] = forgetting_ * xy_[i] + x[i] * seconds;
    }
    ++n_observed_;
    solve();
}

// Solves the normal equations of the parts observed by Gauss-Jordan
// elimination with partial pivoting on a scaled copy. Keeps the previous fit
// when they are nearly singular (every step the same shape, or logit rows
// that always equal the rows) or the fit is not physical.
void StepCostModel::solve() {
    if (n_observed_ < 8) return;
    // Scale the columns so that the elimination sees numbers of one size.
    std::array<double, kParts> scale{};
    for (size_t i = 0; i < kParts; ++i)
        scale[i] = xx_[i][i] > 0.0 ? 1.0 / std::sqrt(xx_[i][i]) : 0.0;
    if (scale[1] == 0.0) return;
    // The parts fitted: fixed and rows always; context and logit rows where
    // some observation had them (no rows attend, or nobody counted logits).
    std::array<size_t, kParts> parts{};
    size_t n = 0;
    for (size_t i = 0; i < kParts; ++i) {
        if (i < 2 || scale[i] != 0.0) parts[n++] = i;
    }
    double a[kParts][kParts + 1];
    for (size_t r = 0; r < n; ++r) {
        for (size_t c = 0; c < n; ++c) {
            a[r][c] = xx_[parts[r]][parts[c]] * scale[parts[r]] * scale[parts[c]];
        }
        a[r][n] = xy_[parts[r]] * scale[parts[r]];
    }
    for (size_t col = 0; col < n; ++col) {
        size_t pivot = col;
        for (size_t row = col + 1; row < n; ++row) {
            if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
        }
        if (std::fabs(a[pivot][col]) < 1e-4) return;
        for (size_t j = 0; j <= n; ++j) std::swap(a[col][j], a[pivot][j]);
        for (size_t row = 0; row < n; ++row) {
            if (row == col) continue;
            const double factor = a[row][col] / a[col][col];
            for (size_t j = col; j <= n; ++j) a[row][j] -= factor * a[col][j];
        }
    }
    std::array<double, kParts> fit{};
    for (size_t r = 0; r < n; ++r) fit[parts[r]] = a[r][n] / a[r][r] * scale[parts[r]];
    // Rows must cost something; any other part below zero is noise.
    if (!(fit[1] > 0.0)) return;
    for (size_t i = 0; i < kParts; ++i) {
        if (!std::isfinite(fit[i])) return;
        if (i != 1) fit[i] = std::max(fit[i], 0.0);
    }
    coefficients_ = fit;
    ready_ = true;
}

}  // namespace ladder::engine
