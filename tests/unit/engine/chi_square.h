// Pearson's chi-square test for the distribution tests: the statistic of
// observed counts against expected ones (categories with little expectation
// pooled), and its p-value from the regularized upper incomplete gamma
// function (series below the mean, Lentz's continued fraction above).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace ladder::engine::testing {

// Q(a, x) = Gamma(a, x) / Gamma(a).
inline double upper_regularized_gamma(double a, double x) {
    if (x <= 0.0) return 1.0;
    const double log_prefix = a * std::log(x) - x - std::lgamma(a);
    if (x < a + 1.0) {
        double term = 1.0 / a;
        double sum = term;
        for (int n = 1; n < 1000; ++n) {
            term *= x / (a + n);
            sum += term;
            if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
        }
        return 1.0 - sum * std::exp(log_prefix);
    }
    constexpr double kTiny = 1e-300;
    double b = x + 1.0 - a;
    double c = 1.0 / kTiny;
    double d = 1.0 / b;
    double h = d;
    for (int i = 1; i < 1000; ++i) {
        const double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (std::fabs(d) < kTiny) d = kTiny;
        c = b + an / c;
        if (std::fabs(c) < kTiny) c = kTiny;
        d = 1.0 / d;
        const double delta = d * c;
        h *= delta;
        if (std::fabs(delta - 1.0) < 1e-15) break;
    }
    return std::exp(log_prefix) * h;
}

struct ChiSquare {
    double statistic = 0.0;
    int degrees_of_freedom = 0;
    double p_value = 1.0;
};

// Observed counts against expected ones (same total). Categories expected
// fewer than 5 times are pooled into one, as the test's approximation needs.
inline ChiSquare chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
    ChiSquare result;
    double pooled_observed = 0.0;
    double pooled_expected = 0.0;
    int n_categories = 0;
    for (size_t i = 0; i < observed.size(); ++i) {
        if (expected[i] < 5.0) {
            pooled_observed += observed[i];
            pooled_expected += expected[i];
            continue;
        }
        result.statistic += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
        ++n_categories;
    }
    if (pooled_expected > 0.0) {
        result.statistic += (pooled_observed - pooled_expected) *
                            (pooled_observed - pooled_expected) / std::max(pooled_expected, 1e-9);
        ++n_categories;
    }
    result.degrees_of_freedom = std::max(1, n_categories - 1);
    result.p_value = upper_regularized_gamma(result.degrees_of_freedom / 2.0, result.statistic / 2.0);
    return result;
}

// Two samples from one distribution? Counts per category of each; the
// expected count of a cell is its row total x column total / all.
inline ChiSquare chi_square_two_samples(const std::vector<double>& a, const std::vector<double>& b) {
    double total_a = 0.0;
    double total_b = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        total_a += a[i];
        total_b += b[i];
    }
    const double total = total_a + total_b;
    ChiSquare result;
    int n_categories = 0;
    double pooled_a = 0.0;
    double pooled_b = 0.0;
    auto add = [&](double count_a, double count_b) {
        const double column = count_a + count_b;
        const double expected_a = column * total_a / total;
        const double expected_b = column * total_b / total;
        result.statistic += (count_a - expected_a) * (count_a - expected_a) / expected_a +
                            (count_b - expected_b) * (count_b - expected_b) / expected_b;
        ++n_categories;
    };
    for (size_t i = 0; i < a.size(); ++i) {
        // A cell either sample expects fewer than 5 times goes to the pool.
        if (std::min(total_a, total_b) * (a[i] + b[i]) / total < 5.0) {
            pooled_a += a[i];
            pooled_b += b[i];
        } else {
            add(a[i], b[i]);
        }
    }
    if (pooled_a + pooled_b > 0.0) add(pooled_a, pooled_b);
    result.degrees_of_freedom = std::max(1, n_categories - 1);
    result.p_value = upper_regularized_gamma(result.degrees_of_freedom / 2.0, result.statistic / 2.0);
    return result;
}

}  // namespace ladder::engine::testing
