// Row-level dispatch from DType to the per-family scalar reference
// (float_rows, quant_legacy, quant_k). Knows nothing of SIMD or threads.
#include "ladder/tensor/reference_ops.h"

#include <cstdint>

#include "ladder/tensor/float_rows.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/quant_k.h"
#include "ladder/tensor/quant_legacy.h"
#include "ladder/util/check.h"

namespace ladder::tensor {

namespace {

// Number of blocks in a row of n elements; a partial block is a caller bug.
int64_t blocks_in_row(DType dtype, int64_t n) {
    const int64_t block_elements = dtype_traits(dtype).block_elements;
    LADDER_CHECK(n >= 0 && n % block_elements == 0, "row length is not a whole number of blocks");
    return n / block_elements;
}

template <typename T>
const T* as(const void* p) {
    LADDER_DCHECK(reinterpret_cast<uintptr_t>(p) % alignof(T) == 0, "misaligned row");
    return static_cast<const T*>(p);
}

template <typename T>
T* as_mut(void* p) {
    LADDER_DCHECK(reinterpret_cast<uintptr_t>(p) % alignof(T) == 0, "misaligned row");
    return static_cast<T*>(p);
}

}  // namespace

bool can_dequantize(DType dtype) {
    switch (dtype) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q4_0:
        case DType::Q4_1:
        case DType::Q5_0:
        case DType::Q5_1:
        case DType::Q8_0:
        case DType::Q8_1:
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K:
        case DType::Q8_K:
            return true;
        default:
            return false;
    }
}

bool can_quantize(DType dtype) {
    switch (dtype) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q4_0:
        case DType::Q4_1:
        case DType::Q5_0:
        case DType::Q5_1:
        case DType::Q8_0:
        case DType::Q8_1:
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K:
        case DType::Q8_K:
            return true;
        default:
            return false;
    }
}

bool can_vec_dot(DType weight_type) {
    switch (weight_type) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q4_0:
        case DType::Q4_1:
        case DType::Q5_0:
        case DType::Q5_1:
        case DType::Q8_0:
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K:
            return true;
        default:
            return false;
    }
}

void dequantize_row(DType dtype, const void* src, float* dst, int64_t n) {
    LADDER_CHECK(can_dequantize(dtype), "dequantize_row: dtype has no reference dequantize");
    const int64_t nb = blocks_in_row(dtype, n);
    switch (dtype) {
        case DType::F32: {
            const float* f = as<float>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = f[i];
            return;
        }
        case DType::F16: return f16_to_f32_row(as<uint16_t>(src), dst, n);
        case DType::BF16: return bf16_to_f32_row(as<uint16_t>(src), dst, n);
        case DType::Q4_0: return dequantize_q4_0(as<BlockQ4_0>(src), dst, nb);
        case DType::Q4_1: return dequantize_q4_1(as<BlockQ4_1>(src), dst, nb);
        case DType::Q5_0: return dequantize_q5_0(as<BlockQ5_0>(src), dst, nb);
        case DType::Q5_1: return dequantize_q5_1(as<BlockQ5_1>(src), dst, nb);
        case DType::Q8_0: return dequantize_q8_0(as<BlockQ8_0>(src), dst, nb);
        case DType::Q8_1: return dequantize_q8_1(as<BlockQ8_1>(src), dst, nb);
        case DType::Q2_K: return dequantize_q2_k(as<BlockQ2_K>(src), dst, nb);
        case DType::Q3_K: return dequantize_q3_k(as<BlockQ3_K>(src), dst, nb);
        case DType::Q4_K: return dequantize_q4_k(as<BlockQ4_K>(src), dst, nb);
        case DType::Q5_K: return dequantize_q5_k(as<BlockQ5_K>(src), dst, nb);
        case DType::Q6_K: return dequantize_q6_k(as<BlockQ6_K>(src), dst, nb);
        case DType::Q8_K: return dequantize_q8_k(as<BlockQ8_K>(src), dst, nb);
        default: break;
    }
    LADDER_CHECK(false, "dequantize_row: unreachable dtype");
}

void quantize_row(DType dtype, const float* src, void* dst, int64_t n) {
    LADDER_CHECK(can_quantize(dtype), "quantize_row: dtype has no reference quantize");
    const int64_t nb = blocks_in_row(dtype, n);
    switch (dtype) {
        case DType::F32: {
            float* f = as_mut<float>(dst);
            for (int64_t i = 0; i < n; ++i) f[i] = src[i];
            return;
        }
        case DType::F16: return f32_to_f16_row(src, as_mut<uint16_t>(dst), n);
        case DType::BF16: return f32_to_bf16_row(src, as_mut<uint16_t>(dst), n);
        case DType::Q4_0: return quantize_q4_0(src, as_mut<BlockQ4_0>(dst), nb);
        case DType::Q4_1: return quantize_q4_1(src, as_mut<BlockQ4_1>(dst), nb);
        case DType::Q5_0: return quantize_q5_0(src, as_mut<BlockQ5_0>(dst), nb);
        case DType::Q5_1: return quantize_q5_1(src, as_mut<BlockQ5_1>(dst), nb);
        case DType::Q8_0: return quantize_q8_0(src, as_mut<BlockQ8_0>(dst), nb);
        case DType::Q8_1: return quantize_q8_1(src, as_mut<BlockQ8_1>(dst), nb);
        case DType::Q2_K:
            return quantize_q2_k(src, as_mut<BlockQ2_K>(dst), nb);
        case DType::Q3_K:
            return quantize_q3_k(src, as_mut<BlockQ3_K>(dst), nb);
        case DType::Q4_K:
            return quantize_q4_k(src, as_mut<BlockQ4_K>(dst), nb);
        case DType::Q5_K:
            return quantize_q5_k(src, as_mut<BlockQ5_K>(dst), nb);
        case DType::Q6_K:
            return quantize_q6_k(src, as_mut<BlockQ6_K>(dst), nb);
        case DType::Q8_K: return quantize_q8_k(src, as_mut<BlockQ8_K>(dst), nb);
        default: break;
    }
    LADDER_CHECK(false, "quantize_row: unreachable dtype");
}

float vec_dot(DType weight_type, const void* weights, const void* activations, int64_t n) {
    LADDER_CHECK(can_vec_dot(weight_type), "vec_dot: weight type has no reference dot product");
    const int64_t nb = blocks_in_row(weight_type, n);
    const void* w = weights;
    const void* a = activations;
    switch (weight_type) {
        case DType::F32: return vec_dot_f32(as<float>(w), as<float>(a), n);
        case DType::F16: return vec_dot_f16(as<uint16_t>(w), as<uint16_t>(a), n);
        case DType::BF16: return vec_dot_bf16(as<uint16_t>(w), as<uint16_t>(a), n);
        case DType::Q4_0: return vec_dot_q4_0_q8_0(as<BlockQ4_0>(w), as<BlockQ8_0>(a), nb);
        case DType::Q4_1: return vec_dot_q4_1_q8_1(as<BlockQ4_1>(w), as<BlockQ8_1>(a), nb);
        case DType::Q5_0: return vec_dot_q5_0_q8_0(as<BlockQ5_0>(w), as<BlockQ8_0>(a), nb);
        case DType::Q5_1: return vec_dot_q5_1_q8_1(as<BlockQ5_1>(w), as<BlockQ8_1>(a), nb);
        case DType::Q8_0: return vec_dot_q8_0_q8_0(as<BlockQ8_0>(w), as<BlockQ8_0>(a), nb);
        case DType::Q2_K: return vec_dot_q2_k_q8_k(as<BlockQ2_K>(w), as<BlockQ8_K>(a), nb);
        case DType::Q3_K: return vec_dot_q3_k_q8_k(as<BlockQ3_K>(w), as<BlockQ8_K>(a), nb);
        case DType::Q4_K: return vec_dot_q4_k_q8_k(as<BlockQ4_K>(w), as<BlockQ8_K>(a), nb);
        case DType::Q5_K: return vec_dot_q5_k_q8_k(as<BlockQ5_K>(w), as<BlockQ8_K>(a), nb);
        case DType::Q6_K: return vec_dot_q6_k_q8_k(as<BlockQ6_K>(w), as<BlockQ8_K>(a), nb);
        default: break;
    }
    LADDER_CHECK(false, "vec_dot: unreachable dtype");
    return 0.0f;
}

}  // namespace ladder::tensor
