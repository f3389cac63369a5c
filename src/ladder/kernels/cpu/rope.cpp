#include "ladder/kernels/cpu/rope.h"

#include <cmath>

namespace ladder::kernels::cpu {

void rope(float* x, int32_t n_heads, int32_t position, const RopeParams& params) {
    const int32_t half = params.rope_dim / 2;
    // theta_i = scale * position * base^(-2i/rope_dim). The power is built up
    // by repeated multiplication in float, as the llama.cpp reference does, so
    // angles agree with it bit for bit rather than merely closely.
    const float theta_step = std::pow(params.freq_base, -2.0f / static_cast<float>(params.rope_dim));
    float theta_unscaled = static_cast<float>(position);
    for (int32_t i = 0; i < half; ++i, theta_unscaled *= theta_step) {
        const float theta = params.freq_scale * theta_unscaled;
        const float cos_theta = std::cos(theta);
        const float sin_theta = std::sin(theta);
        for (int32_t h = 0; h < n_heads; ++h) {
            float* head = x + static_cast<int64_t>(h) * params.head_dim;
            const int32_t a = params.neox ? i : 2 * i;
            const int32_t b = params.neox ? i + half : 2 * i + 1;
            const float x0 = head[a];
            const float x1 = head[b];
            // Fused as llama.cpp's x86 build compiles this expression (GCC
            // contracts the first product into an FMA): the rounding matches
            // bit for bit, and with it greedy outputs agree token for token.
            head[a] = std::fma(x0, cos_theta, -(x1 * sin_theta));
            head[b] = std::fma(x0, sin_theta, x1 * cos_theta);
        }
    }
}

}  // namespace ladder::kernels::cpu
