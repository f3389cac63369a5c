// The scalar path: adapters from the kernel table's type-erased signatures to
// tensor's reference code, which is also what every SIMD path is tested
// against, and for the types the SIMD paths speed up (every weight type) the
// x86 lane order (below).
// One instantiation per dtype keeps the dtype switch out of the per-row call.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/quant_k_codes.h"
#include "ladder/tensor/reference_ops.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::DType;

// The x86-order dot products below are built twice, for the x86-64 baseline
// and for CPUs with FMA, picked once at load (an ifunc). Their float steps are
// all explicit std::fma calls (ISO C++ mode contracts nothing else), which
// the baseline build makes through libm and the FMA one inline: the same
// correctly rounded results, without a library call every eight products
// (the call was an eighth of the scalar path's time).
#define LADDER_BASELINE_AND_FMA __attribute__((target_clones("fma", "default")))

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
using BlockCodes = int8_t[32];  // the integer codes of 32 weights, in element order

float lane_tree(const float acc[8]) {
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

void accumulate_block(const LaneSums sums, float scale, float acc[8]) {
    for (int k = 0; k < 8; ++k) acc[k] = std::fma(scale, static_cast<float>(sums[k]), acc[k]);
}

// sums[k] += scale * (sum of q[j] * y[j] over j = 4k .. 4k + 3), exact in
// int32. All products first, then the groups of four: two plain loops the
// compiler vectorizes, which the scalar path's run time is mostly spent in.
void add_block_lanes(const BlockCodes q, const int8_t y[32], int32_t scale, LaneSums sums) {
    int32_t products[32];
    for (int j = 0; j < 32; ++j) products[j] = q[j] * y[j];
    for (int k = 0; k < 8; ++k) {
        sums[k] += scale * (products[4 * k] + products[4 * k + 1] + products[4 * k + 2] +
                            products[4 * k + 3]);
    }
}

// A 16-byte nibble block: low nibbles are elements 0..15, high ones 16..31.
void unpack_nibbles(const uint8_t qs[16], BlockCodes q) {
    for (int j = 0; j < 16; ++j) {
        q[j] = static_cast<int8_t>(qs[j] & 0x0f);
        q[j + 16] = static_cast<int8_t>(qs[j] >> 4);
    }
}

// kSpreadBits[b][k] is bit k of b (0 or 1): four lookups spread a block's 32
// fifth bits one to an element, where a loop of 32 variable shifts kept the
// baseline build from vectorizing anything.
constexpr auto kSpreadBits = [] {
    std::array<std::array<uint8_t, 8>, 256> table{};
    for (uint32_t b = 0; b < 256; ++b) {
        for (uint32_t k = 0; k < 8; ++k) table[b][k] = static_cast<uint8_t>((b >> k) & 1u);
    }
    return table;
}();

// Q5_0's and Q5_1's codes in [0, 31]: the nibbles, with bit j of the
// little-endian qh as element j's fifth bit.
void unpack_five_bit_codes(const uint8_t qs[16], const uint8_t qh[4], BlockCodes q) {
    unpack_nibbles(qs, q);
    uint8_t high[32];
    for (int k = 0; k < 4; ++k) std::memcpy(high + 8 * k, kSpreadBits[qh[k]].data(), 8);
    for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(q[j] | (high[j] << 4));
}

// A 32-element block of the types with groups of 16 (Q2_K, Q3_K, Q6_K): its
// lanes times the first group's scale in lanes 0..3, the second's in 4..7.
void add_grouped_block_lanes(const BlockCodes q, const int8_t y[32], int first_scale,
                             int second_scale, LaneSums sums) {
    LaneSums halves = {};
    add_block_lanes(q, y, 1, halves);
    for (int k = 0; k < 8; ++k) sums[k] += (k < 4 ? first_scale : second_scale) * halves[k];
}

LADDER_BASELINE_AND_FMA
float x86_order_dot_q4_1_q8_1(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ4_1*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_1*>(activations);
    float acc[8] = {};
    float offsets = 0.0f;  // m_w * s_a, block by block
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        BlockCodes q;
        unpack_nibbles(w[i].qs, q);
        LaneSums sums = {};
        add_block_lanes(q, a[i].qs, 1, sums);
        const float d_a = tensor::fp16_to_fp32(a[i].d);
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * d_a, acc);
        offsets = std::fma(tensor::fp16_to_fp32(w[i].m), tensor::fp16_to_fp32(a[i].s), offsets);
    }
    return lane_tree(acc) + offsets;
}

LADDER_BASELINE_AND_FMA
float x86_order_dot_q8_0_q8_0(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ8_0*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_0*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        LaneSums sums = {};
        add_block_lanes(w[i].qs, a[i].qs, 1, sums);
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * tensor::fp16_to_fp32(a[i].d), acc);
    }
    return lane_tree(acc);
}

LADDER_BASELINE_AND_FMA
float x86_order_dot_q5_0_q8_0(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ5_0*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_0*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        BlockCodes q;
        unpack_five_bit_codes(w[i].qs, w[i].qh, q);
        for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(q[j] - 16);
        LaneSums sums = {};
        add_block_lanes(q, a[i].qs, 1, sums);
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * tensor::fp16_to_fp32(a[i].d), acc);
    }
    return lane_tree(acc);
}

// Q4_0: the nibbles less 8, in [-8, 7]; otherwise as Q8_0.
LADDER_BASELINE_AND_FMA
float x86_order_dot_q4_0_q8_0(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ4_0*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_0*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        BlockCodes q;
        unpack_nibbles(w[i].qs, q);
        for (int8_t& code : q) code = static_cast<int8_t>(code - 8);
        LaneSums sums = {};
        add_block_lanes(q, a[i].qs, 1, sums);
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * tensor::fp16_to_fp32(a[i].d), acc);
    }
    return lane_tree(acc);
}

// Q5_1: the codes in [0, 31] as Q5_0's before the - 16; the offsets m_w * s_a
// by one fma per block, added after the lane tree, as Q4_1.
LADDER_BASELINE_AND_FMA
float x86_order_dot_q5_1_q8_1(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ5_1*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_1*>(activations);
    float acc[8] = {};
    float offsets = 0.0f;
    for (int64_t i = 0; i < n / tensor::kQK; ++i) {
        BlockCodes q;
        unpack_five_bit_codes(w[i].qs, w[i].qh, q);
        LaneSums sums = {};
        add_block_lanes(q, a[i].qs, 1, sums);
        accumulate_block(sums, tensor::fp16_to_fp32(w[i].d) * tensor::fp16_to_fp32(a[i].d), acc);
        offsets = std::fma(tensor::fp16_to_fp32(w[i].m), tensor::fp16_to_fp32(a[i].s), offsets);
    }
    return lane_tree(acc) + offsets;
}

// K-quants: element e of a super-block goes to lane (e % 32) / 4, as in the
// legacy types, times its sub-block's scale (exact in int32); per super-block
// acc[k] += (d_a * d_w) * lane k by one fma.
//
// Q4_K's and Q5_K's mins take four float lanes of their own, lane k
// sub-blocks 2k and 2k + 1 through the activations' bsums, one fma with -(d_a *
// dmin_w) per super-block, summed as (0 + 2) + (1 + 3) and added after the
// lane tree. The two types differ only in their codes (Q5_K's carry a fifth bit).
template <typename Block, void (*kBlockCodes)(const Block&, int, int8_t*)>
[[gnu::always_inline]] inline float x86_order_dot_k_with_mins(const void* weights,
                                                              const void* activations, int64_t n) {
    const auto* w = static_cast<const Block*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_K*>(activations);
    float acc[8] = {};
    float acc_mins[4] = {};
    for (int64_t i = 0; i < n / tensor::kQKK; ++i) {
        LaneSums sums = {};
        int32_t min_lanes[4] = {};
        for (int sub = 0; sub < 8; ++sub) {
            const tensor::ScaleMin sm = tensor::k4_scale_min(w[i].scales, sub);
            BlockCodes q;
            kBlockCodes(w[i], sub, q);
            add_block_lanes(q, a[i].qs + 32 * sub, sm.scale, sums);
            min_lanes[sub / 2] += sm.min * (a[i].bsums[2 * sub] + a[i].bsums[2 * sub + 1]);
        }
        const float d = a[i].d * tensor::fp16_to_fp32(w[i].d);
        const float neg_dmin = -(a[i].d * tensor::fp16_to_fp32(w[i].dmin));
        accumulate_block(sums, d, acc);
        for (int k = 0; k < 4; ++k)
            acc_mins[k] = std::fma(neg_dmin, static_cast<float>(min_lanes[k]), acc_mins[k]);
    }
    return lane_tree(acc) + ((acc_mins[0] + acc_mins[2]) + (acc_mins[1] + acc_mins[3]));
}

void q4_k_codes(const tensor::BlockQ4_K& b, int block, int8_t* out) {
    tensor::q4_k_block_codes(b.qs, block, out);
}

void q5_k_codes(const tensor::BlockQ5_K& b, int block, int8_t* out) {
    tensor::q5_k_block_codes(b, block, out);
}

// Plain functions around the template, which clang cannot multiversion.
LADDER_BASELINE_AND_FMA
float x86_order_dot_q4_k_q8_k(const void* weights, const void* activations, int64_t n) {
    return x86_order_dot_k_with_mins<tensor::BlockQ4_K, q4_k_codes>(weights, activations, n);
}

LADDER_BASELINE_AND_FMA
float x86_order_dot_q5_k_q8_k(const void* weights, const void* activations, int64_t n) {
    return x86_order_dot_k_with_mins<tensor::BlockQ5_K, q5_k_codes>(weights, activations, n);
}

// Q3_K and Q2_K: sixteen groups of 16, so each 32-element block takes two
// scales (lanes 0..3 the first), as Q6_K. Q3_K's codes are signed, in [-4, 3].
LADDER_BASELINE_AND_FMA
float x86_order_dot_q3_k_q8_k(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ3_K*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_K*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQKK; ++i) {
        LaneSums sums = {};
        for (int block = 0; block < 8; ++block) {
            BlockCodes q;
            tensor::q3_k_block_codes(w[i], block, q);
            add_grouped_block_lanes(q, a[i].qs + 32 * block, tensor::q3_k_scale(w[i], 2 * block),
                                    tensor::q3_k_scale(w[i], 2 * block + 1), sums);
        }
        accumulate_block(sums, a[i].d * tensor::fp16_to_fp32(w[i].d), acc);
    }
    return lane_tree(acc);
}

// Q2_K: per super-block first the mins, lane k holding groups 2k and 2k + 1
// (min * bsum), by one fma with -(d_a * dmin_w); then the codes' lanes by one
// fma with d_a * d_w, into the same accumulators.
LADDER_BASELINE_AND_FMA
float x86_order_dot_q2_k_q8_k(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ2_K*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_K*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQKK; ++i) {
        const uint8_t* scales = w[i].scales;
        LaneSums sums = {};
        for (int block = 0; block < 8; ++block) {
            BlockCodes q;
            tensor::two_bit_block_codes(w[i].qs, block, q);
            add_grouped_block_lanes(q, a[i].qs + 32 * block, scales[2 * block] & 0x0f,
                                    scales[2 * block + 1] & 0x0f, sums);
        }
        LaneSums min_lanes = {};
        for (int k = 0; k < 8; ++k) {
            min_lanes[k] = (scales[2 * k] >> 4) * a[i].bsums[2 * k] +
                           (scales[2 * k + 1] >> 4) * a[i].bsums[2 * k + 1];
        }
        accumulate_block(min_lanes, -(a[i].d * tensor::fp16_to_fp32(w[i].dmin)), acc);
        accumulate_block(sums, a[i].d * tensor::fp16_to_fp32(w[i].d), acc);
    }
    return lane_tree(acc);
}

// Q6_K: the stored codes (value + 32, in [0, 63]) go into the lanes, each
// 32-element block taking two scales of 16 (lanes 0..3 the first); the
// 32 * scale * bsum terms come off lane k for the groups of 16 2k and 2k + 1
// (not the groups lane k's elements are in: which int32 lane holds which part
// fixes the float rounding).
LADDER_BASELINE_AND_FMA
float x86_order_dot_q6_k_q8_k(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const tensor::BlockQ6_K*>(weights);
    const auto* a = static_cast<const tensor::BlockQ8_K*>(activations);
    float acc[8] = {};
    for (int64_t i = 0; i < n / tensor::kQKK; ++i) {
        const int8_t* scales = w[i].scales;
        LaneSums sums = {};
        for (int block = 0; block < 8; ++block) {
            BlockCodes q;
            tensor::q6_k_block_codes(w[i], block, q);
            add_grouped_block_lanes(q, a[i].qs + 32 * block, scales[2 * block],
                                    scales[2 * block + 1], sums);
        }
        for (int k = 0; k < 8; ++k) {
            sums[k] -= 32 * (scales[2 * k] * a[i].bsums[2 * k] +
                             scales[2 * k + 1] * a[i].bsums[2 * k + 1]);
        }
        accumulate_block(sums, a[i].d * tensor::fp16_to_fp32(w[i].d), acc);
    }
    return lane_tree(acc);
}

// F16 and F32: lane k takes elements 8m + k by fma, the lane tree sums them,
// then the tail adds in order (F16: a product of two halves is exact in float,
// so the tail's multiply-add rounds once either way; F32: one fma, as the
// SIMD paths' tail).
template <typename Element, float (*kToFloat)(Element)>
[[gnu::always_inline]] inline float x86_order_dot_floats(const void* weights,
                                                         const void* activations, int64_t n) {
    const auto* w = static_cast<const Element*>(weights);
    const auto* a = static_cast<const Element*>(activations);
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int k = 0; k < 8; ++k)
            acc[k] = std::fma(kToFloat(w[i + k]), kToFloat(a[i + k]), acc[k]);
    }
    float sum = lane_tree(acc);
    for (; i < n; ++i) sum = std::fma(kToFloat(w[i]), kToFloat(a[i]), sum);
    return sum;
}

float as_float(float x) { return x; }

LADDER_BASELINE_AND_FMA
float x86_order_dot_f16(const void* weights, const void* activations, int64_t n) {
    return x86_order_dot_floats<uint16_t, tensor::fp16_to_fp32>(weights, activations, n);
}

LADDER_BASELINE_AND_FMA
float x86_order_dot_bf16(const void* weights, const void* activations, int64_t n) {
    return x86_order_dot_floats<uint16_t, tensor::bf16_to_fp32>(weights, activations, n);
}

LADDER_BASELINE_AND_FMA
float x86_order_dot_f32(const void* weights, const void* activations, int64_t n) {
    return x86_order_dot_floats<float, as_float>(weights, activations, n);
}

#undef LADDER_BASELINE_AND_FMA

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
    if constexpr (kType == DType::Q4_0) k.vec_dot_by_weight[slot] = x86_order_dot_q4_0_q8_0;
    if constexpr (kType == DType::Q5_1) k.vec_dot_by_weight[slot] = x86_order_dot_q5_1_q8_1;
    if constexpr (kType == DType::Q2_K) k.vec_dot_by_weight[slot] = x86_order_dot_q2_k_q8_k;
    if constexpr (kType == DType::Q3_K) k.vec_dot_by_weight[slot] = x86_order_dot_q3_k_q8_k;
    if constexpr (kType == DType::Q4_K) k.vec_dot_by_weight[slot] = x86_order_dot_q4_k_q8_k;
    if constexpr (kType == DType::Q5_K) k.vec_dot_by_weight[slot] = x86_order_dot_q5_k_q8_k;
    if constexpr (kType == DType::Q6_K) k.vec_dot_by_weight[slot] = x86_order_dot_q6_k_q8_k;
    if constexpr (kType == DType::F16) k.vec_dot_by_weight[slot] = x86_order_dot_f16;
    if constexpr (kType == DType::BF16) k.vec_dot_by_weight[slot] = x86_order_dot_bf16;
    if constexpr (kType == DType::F32) k.vec_dot_by_weight[slot] = x86_order_dot_f32;
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
