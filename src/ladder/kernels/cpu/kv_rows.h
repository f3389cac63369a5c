// Internal to kernels/cpu: one KV cache row of any cache type as F32, and the
// weighted sum of such rows, per path. The attention kernels read a quantized
// cache through these one row at a time, so no dequantized copy of the cache
// ever exists.
#pragma once

#include <cstdint>

#include "ladder/kernels/cpu/cpu_features.h"
#include "ladder/tensor/dtype.h"

namespace ladder::kernels::cpu::detail {

// out[0, n) = the n values of one row (tensor::dequantize_row's bits), or of
// n / row length rows stored one after another, which decode as one row.
using DecodeKvRowFn = void (*)(const void* row, float* out, int32_t n);
// acc[d] = fma(x[d], a, acc[d]) for d < n (n a multiple of 8).
using WeightRowFn = void (*)(float* acc, const float* x, float a, int32_t n);

struct KvRowOps {
    DecodeKvRowFn decode = nullptr;
    WeightRowFn weight = nullptr;
};

// The row ops of one path for a cache type (kv_cache_type_supported); every
// path gives the same bits.
KvRowOps kv_row_ops(Isa isa, tensor::DType type);

// kv_rows_avx2.cpp: the AVX2 decoders (nullptr for a type it leaves to the
// scalar one) and weighting.
DecodeKvRowFn decode_kv_row_avx2(tensor::DType type);
void weight_row_avx2(float* acc, const float* x, float a, int32_t n);

}  // namespace ladder::kernels::cpu::detail
