// Element-wise kernels: the scalar references, and the choice of path.
#include "ladder/kernels/cpu/activations.h"

#include <cmath>

#include "ladder/kernels/cpu/activations_isa.h"
#include "ladder/kernels/cpu/fast_exp.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

namespace detail {

void silu_mul_scalar(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        gate[i] = g / (1.0f + fast_exp(-g)) * up[i];
    }
}

}  // namespace detail

GatedActivationFn silu_mul_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    return isa == Isa::Scalar ? detail::silu_mul_scalar : detail::silu_mul_avx2;
}

void silu_mul(float* gate, const float* up, int64_t n) {
    // The same path as the matrix products, so LADDER_CPU=scalar runs the reference everywhere.
    static const GatedActivationFn chosen = silu_mul_for(cpu_kernels().isa);
    chosen(gate, up, n);
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
