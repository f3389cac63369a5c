#include "ladder/engine/step_cost_model.h"

#include <algorithm>
#include <cmath>

namespace ladder::engine {

StepCostModel::StepCostModel(double forgetting) : forgetting_(forgetting) {}

void StepCostModel::observe(StepShape shape, double seconds) {
    if (!(seconds > 0.0) || !std::isfinite(seconds)) return;
    const std::array<double, 3> x = {1.0, shape.n_rows, shape.n_context};
    for (size_t i = 0; i < 3; ++i) {
        for (size_t j = 0; j < 3; ++j) xx_[i][j] = forgetting_ * xx_[i][j] + x[i] * x[j];
        xy_[i] = forgetting_ * xy_[i] + x[i] * seconds;
    }
    ++n_observed_;
    solve();
}

// Solves the 3x3 normal equations by Gaussian elimination with partial
// pivoting on a scaled copy. Keeps the previous fit when they are nearly
// singular (every step the same shape) or the fit is not physical.
void StepCostModel::solve() {
    if (n_observed_ < 8) return;
    // Scale the columns so that the elimination sees numbers of one size.
    std::array<double, 3> scale{};
    for (size_t i = 0; i < 3; ++i) scale[i] = xx_[i][i] > 0.0 ? 1.0 / std::sqrt(xx_[i][i]) : 0.0;
    if (scale[1] == 0.0) return;
    double a[3][4];
    for (size_t i = 0; i < 3; ++i) {
        for (size_t j = 0; j < 3; ++j) a[i][j] = xx_[i][j] * scale[i] * scale[j];
        a[i][3] = xy_[i] * scale[i];
    }
    // Without context variation (scale[2] = 0, no rows attend), fit two parts.
    const size_t n = scale[2] == 0.0 ? 2 : 3;
    for (size_t col = 0; col < n; ++col) {
        size_t pivot = col;
        for (size_t row = col + 1; row < n; ++row) {
            if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
        }
        if (std::fabs(a[pivot][col]) < 1e-4) return;
        for (size_t j = 0; j < 4; ++j) std::swap(a[col][j], a[pivot][j]);
        for (size_t row = 0; row < n; ++row) {
            if (row == col) continue;
            const double factor = a[row][col] / a[col][col];
            for (size_t j = col; j < 4; ++j) a[row][j] -= factor * a[col][j];
        }
    }
    std::array<double, 3> fit{};
    for (size_t i = 0; i < n; ++i) fit[i] = a[i][3] / a[i][i] * scale[i];
    // Rows must cost something; a fixed or context part below zero is noise.
    if (!(fit[1] > 0.0) || !std::isfinite(fit[0]) || !std::isfinite(fit[2])) return;
    fit[0] = std::max(fit[0], 0.0);
    fit[2] = std::max(fit[2], 0.0);
    coefficients_ = fit;
    ready_ = true;
}

}  // namespace ladder::engine
