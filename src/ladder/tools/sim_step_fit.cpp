#include "ladder/tools/sim_step_fit.h"

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <map>
#include <vector>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// One point in each octave of row counts that has steps, [2^(i - 1/2),
// 2^(i + 1/2)): the row count nearest 2^i (the smaller on a tie). A point at
// a measured row count is pinned by the steps that have it, whatever the
// steps between points are; nearest the power of two, it is the same count
// from one calibration to the next (the commonest count of an octave can
// flip between two shapes of the grid). Ascending.
std::vector<int64_t> curve_points(std::span<const ObservedStep> steps) {
    std::map<int, int64_t> nearest_by_octave;
    for (const ObservedStep& step : steps) {
        const double log_rows = std::log2(static_cast<double>(step.n_tokens));
        const int octave = static_cast<int>(std::lround(log_rows));
        const auto [it, inserted] = nearest_by_octave.try_emplace(octave, step.n_tokens);
        const double best = std::fabs(std::log2(static_cast<double>(it->second)) - octave);
        const double distance = std::fabs(log_rows - octave);
        if (distance < best || (distance == best && step.n_tokens < it->second))
            it->second = step.n_tokens;
    }
    std::vector<int64_t> points;
    for (const auto& [octave, rows] : nearest_by_octave) points.push_back(rows);
    return points;
}

// The weight of each curve point in a step of n_rows rows, read through
// StepProfile::rows_seconds so that the fit and the simulator share one
// reading of the curve: rows_seconds is linear in the points' seconds, so a
// curve at 1 on one point and 0 on the others gives that point's weight.
// `unit_curve` has the points, every one at 0 seconds.
void add_curve_weights(StepProfile& unit_curve, int64_t n_rows, std::span<double> row) {
    for (size_t j = 0; j < unit_curve.row_costs.size(); ++j) {
        unit_curve.row_costs[j].seconds = 1.0;
        row[j] = unit_curve.rows_seconds(n_rows);
        unit_curve.row_costs[j].seconds = 0.0;
    }
}

// Least squares of a (n x m, row-major) against b by Householder QR: the
// normal equations would square the condition of columns that range from a
// 0/1 weight to context sums in the hundred thousands. False when a column
// is (nearly) a combination of the others.
bool solve_least_squares(std::vector<double> a, std::vector<double> b, size_t n, size_t m,
                         std::vector<double>& x) {
    // Scale every column to unit length first; undone at the end.
    std::vector<double> scale(m, 0.0);
    for (size_t c = 0; c < m; ++c) {
        double norm = 0.0;
        for (size_t r = 0; r < n; ++r) norm += a[r * m + c] * a[r * m + c];
        if (!(norm > 0.0)) return false;
        scale[c] = 1.0 / std::sqrt(norm);
        for (size_t r = 0; r < n; ++r) a[r * m + c] *= scale[c];
    }
    for (size_t c = 0; c < m; ++c) {
        double norm = 0.0;
        for (size_t r = c; r < n; ++r) norm += a[r * m + c] * a[r * m + c];
        norm = std::sqrt(norm);
        if (norm < 1e-9) return false;
        const double alpha = a[c * m + c] > 0.0 ? -norm : norm;
        // v = column c below the diagonal minus alpha e_c, kept in place.
        a[c * m + c] -= alpha;
        double v_norm2 = 0.0;
        for (size_t r = c; r < n; ++r) v_norm2 += a[r * m + c] * a[r * m + c];
        for (size_t k = c + 1; k < m; ++k) {
            double dot = 0.0;
            for (size_t r = c; r < n; ++r) dot += a[r * m + c] * a[r * m + k];
            const double f = 2.0 * dot / v_norm2;
            for (size_t r = c; r < n; ++r) a[r * m + k] -= f * a[r * m + c];
        }
        double dot = 0.0;
        for (size_t r = c; r < n; ++r) dot += a[r * m + c] * b[r];
        const double f = 2.0 * dot / v_norm2;
        for (size_t r = c; r < n; ++r) b[r] -= f * a[r * m + c];
        a[c * m + c] = alpha;  // R's diagonal
    }
    x.assign(m, 0.0);
    for (size_t c = m; c-- > 0;) {
        double sum = b[c];
        for (size_t k = c + 1; k < m; ++k) sum -= a[c * m + k] * x[k];
        x[c] = sum / a[c * m + c];
    }
    for (size_t c = 0; c < m; ++c) {
        x[c] *= scale[c];
        if (!std::isfinite(x[c])) return false;
    }
    return true;
}

}  // namespace

void fit_step_costs(std::span<const ObservedStep> steps, StepProfile& profile) {
    std::vector<ObservedStep> timed;
    for (const ObservedStep& step : steps) {
        if (step.n_tokens > 0 && step.seconds > 0.0 && std::isfinite(step.seconds))
            timed.push_back(step);
    }
    std::vector<int64_t> points = curve_points(timed);
    // Columns: the curve's points, then context and logit rows where some
    // step has them; a part dropped for fitting below zero stays out.
    bool use_context = false;
    bool use_logits = false;
    for (const ObservedStep& step : timed) {
        use_context |= step.n_context > 0.0;
        use_logits |= step.n_logit_rows > 0;
    }
    std::vector<double> x;
    for (;;) {
        if (points.size() < 2) util::fail("calibration: the measured steps did not give a fit");
        StepProfile unit_curve;
        for (int64_t rows : points) unit_curve.row_costs.push_back({rows, 0.0});
        const size_t m = points.size() + (use_context ? 1 : 0) + (use_logits ? 1 : 0);
        std::vector<double> a(timed.size() * m, 0.0);
        std::vector<double> b(timed.size(), 1.0);  // seconds / seconds
        for (size_t r = 0; r < timed.size(); ++r) {
            const ObservedStep& step = timed[r];
            const std::span<double> row(a.data() + r * m, m);
            add_curve_weights(unit_curve, step.n_tokens, row);
            size_t c = points.size();
            if (use_context) row[c++] = step.n_context;
            if (use_logits) row[c++] = static_cast<double>(step.n_logit_rows);
            for (double& value : row) value /= step.seconds;
        }
        if (!solve_least_squares(std::move(a), std::move(b), timed.size(), m, x))
            util::fail("calibration: the measured steps did not give a fit");
        size_t c = points.size();
        const double context_s = use_context ? x[c++] : 0.0;
        const double logit_s = use_logits ? x[c++] : 0.0;
        // Context first: it is the part a grid of short prompts barely shows.
        if (context_s < 0.0) {
            use_context = false;
            continue;
        }
        // Where every octave's steps have the same logit rows a row (decodes
        // only, or prompts only) the logit part is a sum of the curve's points
        // and comes out of noise, pushing a point below zero; the curve then
        // carries it.
        const auto cheapest =
            std::min_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(points.size()));
        const bool point_free = !(*cheapest > 0.0);
        if (logit_s < 0.0 || (use_logits && point_free)) {
            use_logits = false;
            continue;
        }
        // A point still at no cost is one the steps do not pin (a few noisy
        // steps of its row count): the curve goes from its neighbours instead.
        if (point_free) {
            points.erase(points.begin() + (cheapest - x.begin()));
            continue;
        }
        profile.per_context_s = context_s;
        profile.per_logit_row_s = logit_s;
        break;
    }
    profile.row_costs.clear();
    for (size_t i = 0; i < points.size(); ++i) profile.row_costs.push_back({points[i], x[i]});
    profile.fixed_s = 0.0;
    profile.per_token_s = 0.0;
}

}  // namespace ladder::tools
