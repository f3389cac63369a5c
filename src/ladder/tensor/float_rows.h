// Scalar reference rows of the plain float types F32, F16 and BF16: widen to
// float, narrow from float, and dot products as ggml's ggml_vec_dot_f32/f16/
// bf16 leftovers loop computes them.
#pragma once

#include <cstdint>

namespace ladder::tensor {

void f16_to_f32_row(const uint16_t* src, float* dst, int64_t n);
void bf16_to_f32_row(const uint16_t* src, float* dst, int64_t n);
void f32_to_f16_row(const float* src, uint16_t* dst, int64_t n);
void f32_to_bf16_row(const float* src, uint16_t* dst, int64_t n);

// Each product is rounded to float, the running sum is a double, and elements
// are added in index order; the double is rounded to float once at the end.
float vec_dot_f32(const float* w, const float* a, int64_t n);
float vec_dot_f16(const uint16_t* w, const uint16_t* a, int64_t n);
float vec_dot_bf16(const uint16_t* w, const uint16_t* a, int64_t n);

}  // namespace ladder::tensor
