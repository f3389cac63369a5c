// Element-wise kernels of the MLP and the residual stream.
#pragma once

#include <cstdint>

namespace ladder::kernels::cpu {

// gate[i] = silu(gate[i]) * up[i]  (SwiGLU)
void silu_mul(float* gate, const float* up, int64_t n);
// gate[i] = gelu_tanh(gate[i]) * up[i]  (GeGLU, Gemma)
void gelu_mul(float* gate, const float* up, int64_t n);
// x[i] += y[i]
void add_in_place(float* x, const float* y, int64_t n);

}  // namespace ladder::kernels::cpu
