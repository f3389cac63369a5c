// Normalisation kernels on float rows.
#pragma once

#include <cstdint>

namespace ladder::kernels::cpu {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], for one row of n. The sum
// of squares runs in index order in double, so a row's result does not depend
// on the batch around it.
void rms_norm(const float* x, const float* weight, float* out, int64_t n, float eps);

}  // namespace ladder::kernels::cpu
