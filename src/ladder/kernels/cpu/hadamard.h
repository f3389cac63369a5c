// The Walsh-Hadamard rotation llama.cpp applies to a quantized KV cache: it
// spreads an outlier over a whole group of values, so one large dimension no
// longer sets the quantization step of its neighbours.
#pragma once

#include <cstdint>

namespace ladder::kernels::cpu {

// Multiplies each run of n consecutive values of x[0, n_values) by the
// orthonormal n x n Walsh-Hadamard matrix (Sylvester's order), in place; n is
// a power of two dividing n_values. The roundings are ggml-cpu's fast
// Walsh-Hadamard transform's: every value times 1 / sqrtf(n) first, then
// butterflies (u + v, u - v) of width 1, 2, 4, ... n / 2. The matrix is
// symmetric and its own inverse.
void rotate_hadamard(float* x, int64_t n_values, int32_t n);

}  // namespace ladder::kernels::cpu
