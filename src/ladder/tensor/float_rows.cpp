// Scalar reference rows for F32, F16 and BF16 (conversions live in half.h).
#include "ladder/tensor/float_rows.h"

#include "ladder/tensor/half.h"

namespace ladder::tensor {

void f16_to_f32_row(const uint16_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

void bf16_to_f32_row(const uint16_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(src[i]);
}

void f32_to_f16_row(const float* src, uint16_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

void f32_to_bf16_row(const float* src, uint16_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_bf16(src[i]);
}

// The double accumulator keeps long rows (hidden_dim in the thousands) from
// losing the small terms; ggml's scalar path uses the same ggml_float sum.
float vec_dot_f32(const float* w, const float* a, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(w[i] * a[i]);
    return static_cast<float>(sum);
}

float vec_dot_f16(const uint16_t* w, const uint16_t* a, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        sum += static_cast<double>(fp16_to_fp32(w[i]) * fp16_to_fp32(a[i]));
    }
    return static_cast<float>(sum);
}

float vec_dot_bf16(const uint16_t* w, const uint16_t* a, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        sum += static_cast<double>(bf16_to_fp32(w[i]) * bf16_to_fp32(a[i]));
    }
    return static_cast<float>(sum);
}

}  // namespace ladder::tensor
