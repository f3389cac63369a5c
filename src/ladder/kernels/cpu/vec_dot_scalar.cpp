// The scalar path: adapters from the kernel table's type-erased signatures to
// tensor's reference code, which is also what every SIMD path is tested against.
// One instantiation per dtype keeps the dtype switch out of the per-row call.
#include <algorithm>
#include <cmath>
#include <cstdint>

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
    for (int64_t i = 0; i < n / tensor::kQK; ++i) quantize_activation_block(x + i * tensor::kQK, out[i], d);
}

void quantize_activations_q8_1(const float* x, void* blocks, int64_t n) {
    auto* out = static_cast<tensor::BlockQ8_1*>(blocks);
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        float d = 0.0f;
        const int32_t sum = quantize_activation_block(x + i * tensor::kQK, out[i], d);
        out[i].s = tensor::fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

template <DType kType>
void install_one(CpuKernels& k) {
    const auto slot = static_cast<size_t>(kType);
    if (tensor::can_vec_dot(kType)) k.vec_dot_by_weight[slot] = reference_dot<kType>;
    if (tensor::can_quantize(kType)) k.quantize_by_type[slot] = reference_quantize<kType>;
    if constexpr (kType == DType::Q8_0) k.quantize_by_type[slot] = quantize_activations_q8_0;
    if constexpr (kType == DType::Q8_1) k.quantize_by_type[slot] = quantize_activations_q8_1;
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
