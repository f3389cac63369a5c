// Element-wise kernels of the MLP and the residual stream.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/cpu_features.h"

namespace ladder::kernels::cpu {

// gate[i] = silu(gate[i]) * up[i]  (SwiGLU), with exp as fast_exp.h computes
// it. Runs the path cpu_kernels() chose; every path gives the same bits.
void silu_mul(float* gate, const float* up, int64_t n);
// gate[i] = gelu_tanh(gate[i]) * up[i]  (GeGLU) with libm's tanhf. Scalar on
// every path: its bits are whatever this libm's tanhf returns, which a vector
// version could only match by copying one libm release. Gemma runs
// gelu_table.h's path instead, as llama.cpp's x86 build does.
void gelu_mul(float* gate, const float* up, int64_t n);
// x[i] += y[i]
void add_in_place(float* x, const float* y, int64_t n);

using GatedActivationFn = void (*)(float* gate, const float* up, int64_t n);

// The silu_mul of one path, for tests and benchmarks (Avx512 runs the Avx2
// code). The CPU must support the path; Scalar is the reference.
GatedActivationFn silu_mul_for(Isa isa);

}  // namespace ladder::kernels::cpu
