// Scale searches of the K-quant reference quantizers. Each expression is
// written in ggml's order: (w * x) * l is not w * (x * l) in float, and the
// search keeps a candidate only when it is strictly better, so one rounding
// step of difference can pick another scale and change every code.
#include "ladder/tensor/k_quant_scales.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace ladder::tensor {

namespace {

// Below this the block counts as all zeros (ggml's GROUP_MAX_EPS).
constexpr float kGroupMaxEps = 1e-15f;

int clamp_code(int l, int lo, int hi) { return std::max(lo, std::min(hi, l)); }

// The value of largest magnitude, sign kept (the first wins ties); nullopt,
// with every code 0, for a block of (near) zeros.
std::optional<float> signed_absmax_or_zero(int n, const float* x, int8_t* codes) {
    float max = 0.0f;
    float amax = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax >= kGroupMaxEps) return max;
    std::fill(codes, codes + n, int8_t{0});
    return std::nullopt;
}

}  // namespace

float symmetric_scale_weighted_by_square(int n, int nmax, const float* x, int8_t* codes) {
    const std::optional<float> block_max = signed_absmax_or_zero(n, x, codes);
    if (!block_max) return 0.0f;
    const float max = *block_max;
    const auto code_at = [&](float iscale, int i) {
        return clamp_code(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    };
    float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = code_at(iscale, i);
        codes[i] = static_cast<int8_t>(l + nmax);
        const float w = x[i] * x[i];
        const auto fl = static_cast<float>(l);
        sumlx += w * x[i] * fl;
        suml2 += w * fl * fl;
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
        sumlx = 0.0f;
        suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            const auto fl = static_cast<float>(code_at(iscale, i));
            const float w = x[i] * x[i];
            sumlx += w * x[i] * fl;
            suml2 += w * fl * fl;
        }
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) codes[i] = static_cast<int8_t>(nmax + code_at(iscale, i));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float symmetric_scale_by_descent(int n, int nmax, const float* x, int8_t* codes) {
    const std::optional<float> block_max = signed_absmax_or_zero(n, x, codes);
    if (!block_max) return 0.0f;
    const float max = *block_max;
    const float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = clamp_code(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        codes[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        const auto fl = static_cast<float>(l);
        sumlx += w * x[i] * fl;
        suml2 += w * fl * fl;
    }
    for (int sweep = 0; sweep < 5; ++sweep) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const auto old_l = static_cast<float>(codes[i]);
            float slx = sumlx - w * x[i] * old_l;
            if (slx > 0.0f) {
                float sl2 = suml2 - w * old_l * old_l;
                const int new_l = clamp_code(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != codes[i]) {
                    const auto fl = static_cast<float>(new_l);
                    slx += w * x[i] * fl;
                    sl2 += w * fl * fl;
                    if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        codes[i] = static_cast<int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (n_changed == 0) break;
    }
    for (int i = 0; i < n; ++i) codes[i] = static_cast<int8_t>(codes[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float scale_and_min_search(int n, int nmax, const float* x, const float* weights, uint8_t* codes,
                           float* min_out, uint8_t* scratch, float rmin, float rdelta, int nstep,
                           bool absolute_error) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0.0f) min = 0.0f;
    if (max == min) {
        std::fill(codes, codes + n, uint8_t{0});
        *min_out = -min;
        return 0.0f;
    }
    const auto error_of = [absolute_error](float diff) {
        return absolute_error ? std::fabs(diff) : diff * diff;
    };
    const auto fnmax = static_cast<float>(nmax);
    float iscale = fnmax / (max - min);
    float scale = 1.0f / iscale;
    float best_error = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        codes[i] = static_cast<uint8_t>(clamp_code(l, 0, nmax));
        const float diff = scale * static_cast<float>(codes[i]) + min - x[i];
        best_error += weights[i] * error_of(diff);
    }
    if (nstep < 1) {
        *min_out = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + fnmax) / (max - min);
        float sum_l = 0.0f;
        float sum_l2 = 0.0f;
        float sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = clamp_code(nearest_int(iscale * (x[i] - min)), 0, nmax);
            scratch[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            const auto fl = static_cast<float>(l);
            sum_l += w * fl;
            sum_l2 += w * fl * fl;
            sum_xl += w * fl * x[i];
        }
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (det > 0.0f) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
            if (this_min > 0.0f) {
                this_min = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0.0f;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * static_cast<float>(scratch[i]) + this_min - x[i];
                cur_error += weights[i] * error_of(diff);
            }
            if (cur_error < best_error) {
                std::copy(scratch, scratch + n, codes);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *min_out = -min;
    return scale;
}

}  // namespace ladder::tensor
