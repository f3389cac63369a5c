// Normalisation kernels on float rows.
#pragma once

#include <cstdint>

namespace ladder::kernels::cpu {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], for one row of n. The
// float squares are summed in index order in double, so a row's result does
// not depend on the batch around it (and matches llama.cpp's bits).
void rms_norm(const float* x, const float* weight, float* out, int64_t n, float eps);

}  // namespace ladder::kernels::cpu
