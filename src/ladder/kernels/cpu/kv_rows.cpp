// The scalar KV row ops (tensor's reference dequantizers), and the choice of
// a path's ops.
#include "ladder/kernels/cpu/kv_rows.h"

#include <cmath>

#include "ladder/tensor/reference_ops.h"

namespace ladder::kernels::cpu::detail {

namespace {

template <tensor::DType kType>
void decode_scalar(const void* row, float* out, int32_t n) {
    tensor::dequantize_row(kType, row, out, n);
}

void weight_row_scalar(float* acc, const float* x, float a, int32_t n) {
    for (int32_t d = 0; d < n; ++d) acc[d] = std::fma(x[d], a, acc[d]);
}

DecodeKvRowFn decode_scalar_for(tensor::DType type) {
    switch (type) {
        case tensor::DType::F16:
            return decode_scalar<tensor::DType::F16>;
        case tensor::DType::BF16:
            return decode_scalar<tensor::DType::BF16>;
        case tensor::DType::Q8_0:
            return decode_scalar<tensor::DType::Q8_0>;
        case tensor::DType::Q4_0:
            return decode_scalar<tensor::DType::Q4_0>;
        default:
            return nullptr;
    }
}

}  // namespace

KvRowOps kv_row_ops(Isa isa, tensor::DType type) {
    KvRowOps ops{decode_scalar_for(type), weight_row_scalar};
    if (isa != Isa::Scalar) {
        if (const DecodeKvRowFn fast = decode_kv_row_avx2(type)) ops.decode = fast;
        ops.weight = weight_row_avx2;
    }
    return ops;
}

}  // namespace ladder::kernels::cpu::detail
