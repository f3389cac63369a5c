// The scalar path: adapters from the kernel table's type-erased signatures to
// tensor's reference code, which is also what every SIMD path is tested
// against, and for Q4_1, Q8_0 and Q5_0 the x86 lane order (below).
// One instantiation per dtype keeps the dtype switch out of the per-row call.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/reference_ops.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::DType;

template <DType kWeight>
float reference_dot(const void* weights, const void* activations, int64_t n) {
    return tensor::vec_dot(kWeight, weights, activations, n);
}

template <DType kActivation>
void reference_quantize(const float* x, void* blocks, int64_t n) {
    tensor::quantize_row(kActivation, x, blocks, n);
}

// Activations are quantized the way llama.cpp's x86 kernels do it, not the
// way its file-format reference (tensor::quantize_row) does: the inverse scale
// is 127 / amax rather than 1 / (amax / 127), and codes round half to even.
// The two differ in the last bit often enough that a chain of 30 layers
// drifts apart; with this rounding the logits agree with the reference
// engine's to float precision. The SIMD paths reproduce these bytes exactly.
// Returns the sum of the codes; d receives the unrounded scale.
template <typename Block>
int32_t quantize_activation_block(const float* x, Block& block, float& d) {
    float amax = 0.0f;
    for (int j = 0; j < tensor::kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    d = amax / 127.0f;
    const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
    block.d = tensor::fp32_to_fp16(d);
    int32_t sum = 0;
    for (int j = 0; j < tensor::kQK; ++j) {
        block.qs[j] = static_cast<int8_t>(std::nearbyint(x[j] * inverse));  // half to even
        sum += block.qs[j];
    }
    return sum;
}

void quantize_activations_q8_0(const float* x, void* blocks, int64_t n) {
    auto* out = static_cast<tensor::BlockQ8_0*>(blocks);
    float d = 0.0f;
    for (int64_t i = 0; i < n / tensor::kQK; ++i)
        quantize_activation_block(x + i * tensor::kQK, out[i], d);
}

void quantize_activations_q8_1(const float* x, void* blocks, int64_t n) {
    auto* out = static_cast<tensor::BlockQ8_1*>(blocks);
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        float d = 0.0f;
        const int32_t sum = quantize_activation_block(x + i * tensor::kQK, out[i], d);
        out[i].s = tensor::fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

// The dot products of the weight types the SIMD paths run through 8-lane
// integer sums, in the order those paths (and llama.cpp's x86 kernels) add
// them: lane k of a block sums elements 4k..4k + 3 exactly; per block acc[k]
// += (d_w * d_a) * lane k by one fma; the lanes are summed as ((0 + 4) + (2 +
// 6)) + ((1 + 5) + (3 + 7)). tensor's reference adds in another order, which
// agrees to float precision but not bit for bit, and greedy continuations
// follow the last bit; with these the scalar path gives the SIMD paths' (and
// the reference engine's) bits.
using LaneSums = int32_t[8];

float lane_tree(const float acc[8]) {
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

void accumulate_block(const LaneSums sums, float scale, float acc[8]) {
    for (int k = 0; k < 8; ++k) acc[k] = std::fma(scale, static_cast<float>(sums[k]), acc[k]);
}

// Element j of a 16-byte nibble block: low nibbles are 0..15, high ones 16..31.
int32_t nibble(const uint8_t qs[16], int j) { return j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4); }

float x86_order_dot_q4_1_q8_1(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ4_1*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_1*>(activations);
    float acc[8] = {};
    float offsets = 0.0f;  // m_w * s_a, block by block
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        LaneSums sums = {};
        for (int j = 0; j < tensor::kQK; ++j) sums[j / 4] += nibble(w[i].qs, j) * a[i].qs[j];
        const float d_a = tensor::fp16_to_fp32(a[i].d);
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * d_a, acc);
        offsets = std::fma(tensor::fp16_to_fp32(w[i].m), tensor::fp16_to_fp32(a[i].s), offsets);
    }
    return lane_tree(acc) + offsets;
}

float x86_order_dot_q8_0_q8_0(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ8_0*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_0*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        LaneSums sums = {};
        for (int j = 0; j < tensor::kQK; ++j) sums[j / 4] += w[i].qs[j] * a[i].qs[j];
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * tensor::fp16_to_fp32(a[i].d), acc);
    }
    return lane_tree(acc);
}

float x86_order_dot_q5_0_q8_0(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ5_0*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_0*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        uint32_t qh = 0;
        std::memcpy(&qh, w[i].qh, sizeof qh);
        LaneSums sums = {};
        for (int j = 0; j < tensor::kQK; ++j) {
            const int32_t q = nibble(w[i].qs, j) | static_cast<int32_t>(((qh >> j) & 1u) << 4);
            sums[j / 4] += (q - 16) * a[i].qs[j];
        }
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * tensor::fp16_to_fp32(a[i].d), acc);
    }
    return lane_tree(acc);
}

template <DType kType>
void install_one(CpuKernels& k) {
    const auto slot = static_cast<size_t>(kType);
    if (tensor::can_vec_dot(kType)) k.vec_dot_by_weight[slot] = reference_dot<kType>;
    if (tensor::can_quantize(kType)) k.quantize_by_type[slot] = reference_quantize<kType>;
    if constexpr (kType == DType::Q8_0) k.quantize_by_type[slot] = quantize_activations_q8_0;
    if constexpr (kType == DType::Q8_1) k.quantize_by_type[slot] = quantize_activations_q8_1;
    if constexpr (kType == DType::Q4_1) k.vec_dot_by_weight[slot] = x86_order_dot_q4_1_q8_1;
    if constexpr (kType == DType::Q8_0) k.vec_dot_by_weight[slot] = x86_order_dot_q8_0_q8_0;
    if constexpr (kType == DType::Q5_0) k.vec_dot_by_weight[slot] = x86_order_dot_q5_0_q8_0;
}

template <DType... kTypes>
void install_all(CpuKernels& k) {
    (install_one<kTypes>(k), ...);
}

}  // namespace

namespace detail {

void install_scalar_kernels(CpuKernels& k) {
    install_all<DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                DType::Q5_1, DType::Q8_0, DType::Q8_1, DType::Q2_K, DType::Q3_K, DType::Q4_K,
                DType::Q5_K, DType::Q6_K, DType::Q8_K>(k);
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
