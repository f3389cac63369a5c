// Internal to kernels/cpu: the per-path element-wise kernels behind silu_mul_for.
#pragma once

#include <cstdint>

namespace ladder::kernels::cpu::detail {

void silu_mul_scalar(float* gate, const float* up, int64_t n);  // activations.cpp: the reference
void silu_mul_avx2(float* gate, const float* up, int64_t n);    // activations_avx2.cpp

}  // namespace ladder::kernels::cpu::detail
