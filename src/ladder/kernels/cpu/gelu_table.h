// GeGLU (Gemma's MLP gate) computed the way llama.cpp's CPU backend does: GELU
// in its tanh form, read from a table of every F16 input. Owns that table only.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/activations.h"

namespace ladder::kernels::cpu {

// GELU (tanh approximation) of the F16 value with bits h, rounded to F16.
uint16_t gelu_f16_table_entry(uint16_t h);

// gate[i] = gelu(gate[i]) * up[i], where gelu(x) is 0 for x <= -10, x for
// x >= 10, and otherwise the table entry of x rounded to F16. This is ggml's
// GGML_GELU_FP16 path (the default on x86): its result differs from the exact
// GELU by up to an F16 rounding, and Gemma's greedy continuations follow that
// rounding, so the exact formula would drift from the reference engine.
// Runs the path cpu_kernels() chose; every path gives the same bits.
void gelu_mul_f16_table(float* gate, const float* up, int64_t n);

// The gelu_mul_f16_table of one path, for tests and benchmarks (Avx512 runs
// the Avx2 code). The CPU must support the path; Scalar is the reference.
GatedActivationFn gelu_mul_f16_table_for(Isa isa);

}  // namespace ladder::kernels::cpu
