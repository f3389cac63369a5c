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
        const int64_t n_rows = step.work.n_tokens;
        const double log_rows = std::log2(static_cast<double>(n_rows));
        const int octave = static_cast<int>(std::lround(log_rows));
        const auto [it, inserted] = nearest_by_octave.try_emplace(octave, n_rows);
        const double best = std::fabs(std::log2(static_cast<double>(it->second)) - octave);
        const double distance = std::fabs(log_rows - octave);
        if (distance < best || (distance == best && n_rows < it->second)) it->second = n_rows;
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

// The parts of a step's cost beside the rows curve, each a column of the
// fit where the steps have it.
struct Parts {
    int context = 0;  // 0: none; 1: one price for every row; 2: prompt and decode rows apart
    bool kv_read = false;
    bool logits = false;

    size_t size() const {
        return static_cast<size_t>(context) + (kv_read ? 1 : 0) + (logits ? 1 : 0);
    }
    // The columns of one step, from row[0] on.
    void fill(const StepWork& work, std::span<double> row) const {
        size_t c = 0;
        if (context == 2) {
            row[c++] = work.n_context - work.n_decode_context;
            row[c++] = work.n_decode_context;
        } else if (context == 1) {
            row[c++] = work.n_context;
        }
        if (kv_read) row[c++] = work.n_kv_read;
        if (logits) row[c++] = static_cast<double>(work.n_logit_rows);
    }
    // Gives up the part the steps tell from the others least, where a fit
    // fails or is not physical: the KV read (a lone decode reads what it
    // attends to), then the decode rows' own price (steps whose prompt chunks
    // each have a row count of their own do not tell a prompt row's from the
    // curve). False when neither is left.
    bool simplify() {
        if (kv_read) {
            kv_read = false;
        } else if (context == 2) {
            context = 1;
        } else {
            return false;
        }
        return true;
    }
};

}  // namespace

void HeldPrices::hold_logit_rows_of(const StepProfile& profile) {
    logit_rows = true;
    prices.per_logit_row_s = profile.per_logit_row_s;
}

void HeldPrices::hold_attention_of(const StepProfile& profile) {
    attention = true;
    prices.per_context_s = profile.per_context_s;
    prices.per_decode_context_s = profile.per_decode_context_s;
    prices.per_kv_read_s = profile.per_kv_read_s;
}

void fit_step_costs(std::span<const ObservedStep> steps, StepProfile& profile,
                    const HeldPrices& held) {
    std::vector<ObservedStep> timed;
    for (const ObservedStep& step : steps) {
        if (step.work.n_tokens > 0 && step.seconds > 0.0 && std::isfinite(step.seconds))
            timed.push_back(step);
    }
    std::vector<int64_t> points = curve_points(timed);
    // Columns: the curve's points, then the parts some step has; a part
    // dropped for fitting below zero stays out.
    bool has_prompt_context = false;
    bool has_decode_context = false;
    Parts parts;
    for (const ObservedStep& step : timed) {
        has_prompt_context |= step.work.n_context > step.work.n_decode_context;
        has_decode_context |= step.work.n_decode_context > 0.0;
        parts.kv_read |= step.work.n_kv_read > 0.0;
        parts.logits |= step.work.n_logit_rows > 0;
    }
    parts.context = (has_prompt_context ? 1 : 0) + (has_decode_context ? 1 : 0);
    if (held.attention) {
        parts.context = 0;
        parts.kv_read = false;
    }
    if (held.logit_rows) parts.logits = false;
    std::vector<double> x;
    for (;;) {
        if (points.size() < 2) util::fail("calibration: the measured steps did not give a fit");
        StepProfile unit_curve;
        for (int64_t rows : points) unit_curve.row_costs.push_back({rows, 0.0});
        const size_t m = points.size() + parts.size();
        std::vector<double> a(timed.size() * m, 0.0);
        // What the held parts leave of each step, over its seconds.
        std::vector<double> b(timed.size());
        for (size_t r = 0; r < timed.size(); ++r) {
            const ObservedStep& step = timed[r];
            b[r] = 1.0 - held.seconds(step.work) / step.seconds;
            const std::span<double> row(a.data() + r * m, m);
            add_curve_weights(unit_curve, step.work.n_tokens, row);
            parts.fill(step.work, row.subspan(points.size()));
            for (double& value : row) value /= step.seconds;
        }
        if (!solve_least_squares(std::move(a), std::move(b), timed.size(), m, x)) {
            if (parts.simplify()) continue;
            util::fail("calibration: the measured steps did not give a fit");
        }
        size_t c = points.size();
        const double context_s = parts.context > 0 ? x[c++] : 0.0;
        const double decode_context_s = parts.context == 2 ? x[c++] : context_s;
        const double kv_read_s = parts.kv_read ? x[c++] : 0.0;
        const double logit_s = parts.logits ? x[c++] : 0.0;
        const auto cheapest =
            std::min_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(points.size()));
        const bool point_free = !(*cheapest > 0.0);
        // A fit with a part below zero or a point at no cost is not the
        // machine's: give up the parts the steps tell apart least, the KV
        // read, then the decode rows' own price (a few steps of a served
        // trace can trade either against the curve), before the rules below.
        const bool physical = context_s >= 0.0 && decode_context_s >= 0.0 && kv_read_s >= 0.0 &&
                              logit_s >= 0.0 && !point_free;
        if (!physical && parts.simplify()) continue;
        // Context next: it is the part a grid of short prompts barely shows.
        if (context_s < 0.0) {
            parts.context = 0;
            continue;
        }
        // Where every octave's steps have the same logit rows a row (decodes
        // only, or prompts only) the logit part is a sum of the curve's points
        // and comes out of noise, pushing a point below zero; the curve then
        // carries it.
        if (logit_s < 0.0 || (parts.logits && point_free)) {
            parts.logits = false;
            continue;
        }
        // A point still at no cost is one the steps do not pin (a few noisy
        // steps of its row count): the curve goes from its neighbours instead.
        if (point_free) {
            points.erase(points.begin() + (cheapest - x.begin()));
            continue;
        }
        if (held.attention) {
            profile.per_context_s = held.prices.per_context_s;
            profile.per_decode_context_s = held.prices.per_decode_context_s;
            profile.per_kv_read_s = held.prices.per_kv_read_s;
        } else {
            profile.per_context_s = context_s;
            profile.per_decode_context_s.reset();
            if (parts.context == 2) profile.per_decode_context_s = decode_context_s;
            profile.per_kv_read_s = kv_read_s;
        }
        profile.per_logit_row_s = held.logit_rows ? held.prices.per_logit_row_s : logit_s;
        break;
    }
    profile.row_costs.clear();
    for (size_t i = 0; i < points.size(); ++i) profile.row_costs.push_back({points[i], x[i]});
    profile.fixed_s = 0.0;
    profile.per_token_s = 0.0;
}

}  // namespace ladder::tools
