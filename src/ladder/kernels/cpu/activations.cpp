#include "ladder/kernels/cpu/activations.h"

#include <cmath>

#include "ladder/kernels/cpu/fast_exp.h"

namespace ladder::kernels::cpu {

void silu_mul(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        gate[i] = g / (1.0f + fast_exp(-g)) * up[i];
    }
}

void gelu_mul(float* gate, const float* up, int64_t n) {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    constexpr float kCoefficient = 0.044715f;
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        const float inner = kSqrt2OverPi * g * (1.0f + kCoefficient * g * g);
        gate[i] = 0.5f * g * (1.0f + std::tanh(inner)) * up[i];
    }
}

void add_in_place(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace ladder::kernels::cpu
