// vec_dot against the float dot product of the dequantized rows, over odd
// numbers of blocks, and the documented block-by-block summation order that
// batch invariance relies on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ladder/tensor/dtype.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/reference_ops.h"

namespace ladder::tensor {
namespace {

// Byte offsets of fp16 scale fields per block; random bytes elsewhere cover
// every code and packed scale, these must stay finite and moderate.
std::vector<size_t> half_fields(DType dtype) {
    switch (dtype) {
        case DType::Q4_0:
        case DType::Q5_0:
        case DType::Q8_0: return {0};
        case DType::Q4_1:
        case DType::Q5_1:
        case DType::Q4_K:
        case DType::Q5_K: return {0, 2};
        case DType::Q2_K: return {80, 82};
        case DType::Q3_K: return {108};
        case DType::Q6_K: return {208};
        default: return {};
    }
}

// A weight row of n elements: random blocks for quantized types, random
// values for float types.
std::vector<uint8_t> random_weights(DType dtype, int64_t n, std::mt19937& rng) {
    std::vector<uint8_t> bytes(*row_bytes(dtype, n));
    if (!dtype_traits(dtype).is_quantized) {
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> values(static_cast<size_t>(n));
        for (float& v : values) v = normal(rng);
        quantize_row(dtype, values.data(), bytes.data(), n);
        return bytes;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(1e-3f, 0.5f);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(byte(rng));
    const auto block_bytes = static_cast<size_t>(dtype_traits(dtype).block_bytes);
    for (size_t block = 0; block < bytes.size(); block += block_bytes) {
        for (const size_t offset : half_fields(dtype)) {
            const uint16_t h = fp32_to_fp16(byte(rng) % 2 ? scale(rng) : -scale(rng));
            std::memcpy(&bytes[block + offset], &h, sizeof h);
        }
    }
    return bytes;
}

std::vector<uint8_t> quantized_activations(DType weight_type, int64_t n, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 0.7f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    const DType act = vec_dot_type(weight_type);
    std::vector<uint8_t> bytes(*row_bytes(act, n));
    quantize_row(act, x.data(), bytes.data(), n);
    return bytes;
}

std::vector<float> dequantized(DType dtype, const std::vector<uint8_t>& bytes, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    dequantize_row(dtype, bytes.data(), out.data(), n);
    return out;
}

class VecDot : public ::testing::TestWithParam<DType> {};

TEST_P(VecDot, equals_the_float_dot_of_the_dequantized_rows) {
    const DType wtype = GetParam();
    const DType atype = vec_dot_type(wtype);
    const int64_t block = dtype_traits(wtype).block_elements == 1
                              ? 32
                              : dtype_traits(wtype).block_elements;
    std::mt19937 rng(1234);
    for (const int64_t n_blocks : {1, 3, 7, 13}) {
        const int64_t n = n_blocks * block;
        const std::vector<uint8_t> w = random_weights(wtype, n, rng);
        const std::vector<uint8_t> a = quantized_activations(wtype, n, rng);
        const std::vector<float> wf = dequantized(wtype, w, n);
        const std::vector<float> af = dequantized(atype, a, n);

        double exact = 0.0;
        double magnitude = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            exact += static_cast<double>(wf[i]) * af[i];
            magnitude += std::fabs(static_cast<double>(wf[i]) * af[i]);
        }
        // Float rounding of block scales and of the running sum: a few ulps of
        // the magnitude. Q4_1/Q5_1 also use the activations' s, a block sum
        // stored as fp16, so their bound adds |m * s| * 2^-11 per block.
        double tolerance = 1e-6 * magnitude + 1e-6;
        if (atype == DType::Q8_1) {
            const auto* wb = reinterpret_cast<const uint16_t*>(w.data());
            const auto* ab = reinterpret_cast<const BlockQ8_1*>(a.data());
            const size_t stride = static_cast<size_t>(dtype_traits(wtype).block_bytes) / 2;
            for (int64_t b = 0; b < n_blocks; ++b) {
                const float m = fp16_to_fp32(wb[b * stride + 1]);  // d then m
                tolerance += std::fabs(m * fp16_to_fp32(ab[b].s)) * 0x1p-11;
            }
        }
        const float got = vec_dot(wtype, w.data(), a.data(), n);
        EXPECT_NEAR(got, exact, tolerance)
            << dtype_name(wtype) << " x " << dtype_name(atype) << " over " << n_blocks
            << " blocks";
    }
}

// vec_dot(row) must be exactly the float sum, in block order, of the vec_dot
// of each block alone: the order DESIGN.md's batch invariance depends on, and
// the one every SIMD kernel must keep to match this reference bit for bit.
class VecDotOrder : public ::testing::TestWithParam<DType> {};

TEST_P(VecDotOrder, adds_block_results_in_increasing_block_order) {
    const DType wtype = GetParam();
    const DType atype = vec_dot_type(wtype);
    const int64_t block = dtype_traits(wtype).block_elements;
    const int64_t n_blocks = 9;
    std::mt19937 rng(99);
    const std::vector<uint8_t> w = random_weights(wtype, n_blocks * block, rng);
    const std::vector<uint8_t> a = quantized_activations(wtype, n_blocks * block, rng);
    const auto w_bytes = static_cast<size_t>(dtype_traits(wtype).block_bytes);
    const auto a_bytes = static_cast<size_t>(dtype_traits(atype).block_bytes);

    float in_order = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
        in_order += vec_dot(wtype, &w[b * w_bytes], &a[b * a_bytes], block);
    }
    EXPECT_EQ(vec_dot(wtype, w.data(), a.data(), n_blocks * block), in_order)
        << dtype_name(wtype);
}

TEST(VecDot, float_rows_accumulate_in_double) {
    // 1 + 2^-30 * 1024 is lost in a float running sum but kept in double.
    std::vector<float> w(1025, 0x1p-30f);
    std::vector<float> a(1025, 1.0f);
    w[0] = 1.0f;
    EXPECT_EQ(vec_dot(DType::F32, w.data(), a.data(), 1025), 1.0f + 0x1p-20f);
}

INSTANTIATE_TEST_SUITE_P(QuantizedWeightTypes, VecDotOrder,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                           DType::Q8_0, DType::Q2_K, DType::Q3_K, DType::Q4_K,
                                           DType::Q5_K, DType::Q6_K),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

INSTANTIATE_TEST_SUITE_P(AllWeightTypes, VecDot,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q4_0,
                                           DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                                           DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                                           DType::Q6_K),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ladder::tensor
