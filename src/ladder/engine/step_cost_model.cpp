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

// Solves the normal equations of the given parts by Gauss-Jordan elimination
// with partial pivoting on a scaled copy: false when they are nearly
// singular (every step the same shape, or logit rows that always equal the
// rows) or give something that is not a number.
bool StepCostModel::solve_parts(std::span<const size_t> parts,
                                std::array<double, kParts>& fit) const {
    // Scale the columns so that the elimination sees numbers of one size.
    std::array<double, kParts> scale{};
    for (size_t i = 0; i < kParts; ++i)
        scale[i] = xx_[i][i] > 0.0 ? 1.0 / std::sqrt(xx_[i][i]) : 0.0;
    const size_t n = parts.size();
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
        if (std::fabs(a[pivot][col]) < 1e-4) return false;
        for (size_t j = 0; j <= n; ++j) std::swap(a[col][j], a[pivot][j]);
        for (size_t row = 0; row < n; ++row) {
            if (row == col) continue;
            const double factor = a[row][col] / a[col][col];
            for (size_t j = col; j <= n; ++j) a[row][j] -= factor * a[col][j];
        }
    }
    fit = {};
    for (size_t r = 0; r < n; ++r) {
        fit[parts[r]] = a[r][n] / a[r][r] * scale[parts[r]];
        if (!std::isfinite(fit[parts[r]])) return false;
    }
    return true;
}

// The least-squares fit with no part below zero: a part that comes out
// negative (noise, or a part the steps barely exercise) is left out and the
// others fitted again without it, rather than set to zero afterwards, which
// would price every step too dear. Keeps the previous fit when the parts
// cannot be told apart, or rows come out free.
void StepCostModel::solve() {
    if (n_observed_ < 8) return;
    if (xx_[1][1] <= 0.0) return;
    // The parts fitted: fixed and rows always; context and logit rows where
    // some observation had them (no rows attend, or nobody counted logits).
    std::array<size_t, kParts> parts{};
    size_t n = 0;
    for (size_t i = 0; i < kParts; ++i) {
        if (i < 2 || xx_[i][i] > 0.0) parts[n++] = i;
    }
    std::array<double, kParts> fit{};
    for (;;) {
        if (!solve_parts(std::span<const size_t>(parts.data(), n), fit)) return;
        // Rows must cost something.
        if (!(fit[1] > 0.0)) return;
        size_t most_negative = kParts;
        for (size_t r = 0; r < n; ++r) {
            const size_t part = parts[r];
            if (part != 1 && fit[part] < 0.0 &&
                (most_negative == kParts || fit[part] < fit[parts[most_negative]])) {
                most_negative = r;
            }
        }
        if (most_negative == kParts) break;
        for (size_t r = most_negative; r + 1 < n; ++r) parts[r] = parts[r + 1];
        --n;
    }
    coefficients_ = fit;
    ready_ = true;
}

}  // namespace ladder::engine
