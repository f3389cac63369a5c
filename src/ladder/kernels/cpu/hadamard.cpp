#include "ladder/kernels/cpu/hadamard.h"

#include <cmath>

#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

void rotate_hadamard(float* x, int64_t n_values, int32_t n) {
    LADDER_CHECK(n > 0 && (n & (n - 1)) == 0 && n_values % n == 0,
                 "a Hadamard rotation needs a power of two dividing the values");
    const float scale = 1.0f / std::sqrt(static_cast<float>(n));
    for (int64_t i = 0; i < n_values; ++i) x[i] *= scale;
    for (float* run = x; run < x + n_values; run += n) {
        for (int32_t width = 1; width < n; width *= 2) {
            for (int32_t i = 0; i < n; i += 2 * width) {
                for (int32_t j = i; j < i + width; ++j) {
                    const float u = run[j];
                    const float v = run[j + width];
                    run[j] = u + v;
                    run[j + width] = u - v;
                }
            }
        }
    }
}

}  // namespace ladder::kernels::cpu
