// The table of CPU kernels chosen once at start from CPUID (or LADDER_CPU): dot
// products of a weight row with a quantized activation row, and the activation
// quantizers. The dtype is resolved here, once per matrix, not per call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ladder/kernels/cpu/cpu_features.h"
#include "ladder/tensor/dtype.h"

namespace ladder::kernels::cpu {

// Dot product of n elements: a weight row of some dtype with an activation row
// already quantized to tensor::vec_dot_type(weight dtype). n is a whole number
// of blocks of both types.
//
// Reduction order, the same for every path and independent of what else is
// computed: blocks are visited in increasing order; each block's products are
// summed exactly in integers (float for F16/F32) and scaled once; the scaled
// block values are accumulated in that order (SIMD paths keep 8 or 16 float
// lanes of partial sums and add the lanes in a fixed tree at the end). A SIMD
// path therefore differs from the scalar reference only by float rounding of
// that accumulation, and every path is deterministic.
using VecDotFn = float (*)(const void* weights, const void* activations, int64_t n);

// Quantizes n floats (a whole number of blocks) to blocks of one activation
// type; every path writes bytes identical to tensor's reference quantize_row.
using QuantizeRowFn = void (*)(const float* x, void* blocks, int64_t n);

// Many dot products at once, for prefill and batched decode: for r <
// n_weight_rows and t < n_activation_rows, out[t * out_stride + r] is the
// VecDotFn of the same table for weight row r and activation row t, bit for
// bit (each output keeps that kernel's own accumulation; see gemm_tiles.h).
// Rows are weight_row_bytes / activation_row_bytes apart; n as for VecDotFn.
using GemmFn = void (*)(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                        const void* activations, size_t activation_row_bytes,
                        int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride);

struct CpuKernels {
    // Indexed by ggml type id; enough for every id in tensor::DType.
    static constexpr int kDTypeSlots = 32;

    Isa isa = Isa::Scalar;
    std::array<VecDotFn, kDTypeSlots> vec_dot_by_weight{};      // by weight dtype
    std::array<QuantizeRowFn, kDTypeSlots> quantize_by_type{};  // by activation dtype
    std::array<GemmFn, kDTypeSlots> gemm_by_weight{};           // by weight dtype

    // nullptr when there is no kernel for that dtype.
    VecDotFn vec_dot(tensor::DType weight_type) const;
    QuantizeRowFn quantize_row(tensor::DType activation_type) const;
    GemmFn gemm(tensor::DType weight_type) const;
};

// The kernels every caller uses: the best path this CPU runs, or the one named
// by LADDER_CPU=scalar|avx2|avx512. Chosen on the first call; that call throws
// util::InputError for a bad LADDER_CPU, so the CLI calls it once at start.
const CpuKernels& cpu_kernels();

// The table of one path, for tests and benchmarks. The CPU must support it.
const CpuKernels& cpu_kernels_for(Isa isa);

}  // namespace ladder::kernels::cpu
