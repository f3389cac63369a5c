#include "ladder/kernels/cpu/norms.h"

#include <cmath>

namespace ladder::kernels::cpu {

void rms_norm(const float* x, const float* weight, float* out, int64_t n, float eps) {
    double sum_squares = 0.0;
    // Each square is rounded to float before the double sum, as ggml does: the
    // mean then matches its bits, and Gemma's large activations need that.
    for (int64_t i = 0; i < n; ++i) sum_squares += static_cast<double>(x[i] * x[i]);
    const float scale = 1.0f / std::sqrt(static_cast<float>(sum_squares / n) + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

}  // namespace ladder::kernels::cpu
