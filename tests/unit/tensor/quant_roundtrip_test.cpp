// Quantize -> dequantize error bounds per type, the block structs against
// dtype.h's table, and the auxiliary fields (Q8_1's s, Q8_K's bsums).
#include <gtest/gtest.h>

#include <algorithm>
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

std::vector<float> random_row(int64_t n, uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> row(static_cast<size_t>(n));
    for (float& v : row) v = normal(rng);
    return row;
}

std::vector<float> round_trip(DType dtype, const std::vector<float>& row) {
    const auto n = static_cast<int64_t>(row.size());
    std::vector<uint8_t> encoded(*row_bytes(dtype, n));
    quantize_row(dtype, row.data(), encoded.data(), n);
    std::vector<float> decoded(row.size());
    dequantize_row(dtype, encoded.data(), decoded.data(), n);
    return decoded;
}

// Largest error quantization to dtype may make on one block, from the block's
// values: half a step from rounding (a whole step where ggml clamps the code
// opposite the extreme, Q4_0/Q5_0), plus max_code times the fp16 rounding
// error of the stored step, plus that of the stored offset. fp16 rounding is
// relative 2^-11 for normals but absolute 2^-25 once the value is subnormal.
float half_error(float v) { return std::max(std::fabs(v) * 0x1p-11f, 0x1p-25f); }

float error_bound(DType dtype, const float* block, int n) {
    const auto [lo, hi] = std::minmax_element(block, block + n);
    const float amax = std::max(std::fabs(*lo), std::fabs(*hi));
    const auto bound = [](float step, float steps_off, int max_code, float offset_error) {
        return step * steps_off + static_cast<float>(max_code) * half_error(step) + offset_error +
               1e-7f;
    };
    switch (dtype) {
        case DType::Q4_0: return bound(amax / 8, 1.0f, 8, 0.0f);
        case DType::Q5_0: return bound(amax / 16, 1.0f, 16, 0.0f);
        case DType::Q4_1: return bound((*hi - *lo) / 15, 0.5f, 15, half_error(*lo));
        case DType::Q5_1: return bound((*hi - *lo) / 31, 0.5f, 31, half_error(*lo));
        case DType::Q8_0:
        case DType::Q8_1: return bound(amax / 127, 0.5f, 127, 0.0f);
        case DType::Q8_K: return amax / 127 * (0.5f + 1e-4f);  // float step, no fp16
        default: return 0.0f;
    }
}

class QuantRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(QuantRoundTrip, stays_within_half_a_step_per_block) {
    const DType dtype = GetParam();
    const int block = static_cast<int>(dtype_traits(dtype).block_elements);
    for (const float scale : {1e-3f, 0.5f, 30.0f}) {
        const std::vector<float> row = random_row(256 * 5, 17, scale);
        const std::vector<float> decoded = round_trip(dtype, row);
        for (size_t b = 0; b < row.size(); b += block) {
            const float bound = error_bound(dtype, &row[b], block);
            for (size_t i = b; i < b + block; ++i) {
                ASSERT_LE(std::fabs(decoded[i] - row[i]), bound)
                    << dtype_name(dtype) << " element " << i << " scale " << scale << ": "
                    << row[i] << " came back as " << decoded[i];
            }
        }
    }
}

TEST_P(QuantRoundTrip, maps_an_all_zero_block_to_zeros) {
    const DType dtype = GetParam();
    const std::vector<float> zeros(512, 0.0f);
    for (const float v : round_trip(dtype, zeros)) ASSERT_EQ(v, 0.0f) << dtype_name(dtype);
}

INSTANTIATE_TEST_SUITE_P(AllQuantizable, QuantRoundTrip,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                           DType::Q8_0, DType::Q8_1, DType::Q8_K),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(FloatRoundTrip, f32_is_exact_f16_and_bf16_round_to_their_precision) {
    const std::vector<float> row = random_row(96, 5, 3.0f);
    EXPECT_EQ(round_trip(DType::F32, row), row);
    const std::vector<float> f16 = round_trip(DType::F16, row);
    const std::vector<float> bf16 = round_trip(DType::BF16, row);
    for (size_t i = 0; i < row.size(); ++i) {
        EXPECT_LE(std::fabs(f16[i] - row[i]), std::fabs(row[i]) * 0x1p-11f + 0x1p-25f) << i;
        EXPECT_LE(std::fabs(bf16[i] - row[i]), std::fabs(row[i]) * 0x1p-8f) << i;
    }
}

TEST(QuantRoundTrip, q8_1_s_is_the_sum_of_the_block_in_half_precision) {
    const std::vector<float> row = random_row(32 * 3, 9, 2.0f);
    std::vector<BlockQ8_1> blocks(3);
    quantize_row(DType::Q8_1, row.data(), blocks.data(), 96);
    for (const BlockQ8_1& b : blocks) {
        float sum = 0.0f;
        for (const int8_t q : b.qs) sum += static_cast<float>(q) * fp16_to_fp32(b.d);
        EXPECT_NEAR(fp16_to_fp32(b.s), sum, std::fabs(sum) * 0x1p-10f + 1e-4f);
    }
}

TEST(QuantRoundTrip, q8_k_bsums_sum_each_group_of_16_codes_and_extreme_is_minus_127) {
    std::vector<float> row = random_row(256 * 2, 3, 1.0f);
    row[77] = 9.0f;  // the extreme of block 0 is positive: it must become -127
    std::vector<BlockQ8_K> blocks(2);
    quantize_row(DType::Q8_K, row.data(), blocks.data(), 512);
    EXPECT_EQ(blocks[0].qs[77], -127);
    EXPECT_LT(blocks[0].d, 0.0f);
    for (const BlockQ8_K& b : blocks) {
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int e = 16 * g; e < 16 * g + 16; ++e) sum += b.qs[e];
            EXPECT_EQ(b.bsums[g], sum) << "group " << g;
        }
    }
}

TEST(QuantBlocks, struct_sizes_match_the_dtype_table) {
    const auto expect_size = [](DType dtype, size_t size, int64_t elements) {
        EXPECT_EQ(static_cast<int64_t>(size), dtype_traits(dtype).block_bytes) << dtype_name(dtype);
        EXPECT_EQ(elements, dtype_traits(dtype).block_elements) << dtype_name(dtype);
    };
    expect_size(DType::Q4_0, sizeof(BlockQ4_0), kQK);
    expect_size(DType::Q4_1, sizeof(BlockQ4_1), kQK);
    expect_size(DType::Q5_0, sizeof(BlockQ5_0), kQK);
    expect_size(DType::Q5_1, sizeof(BlockQ5_1), kQK);
    expect_size(DType::Q8_0, sizeof(BlockQ8_0), kQK);
    expect_size(DType::Q8_1, sizeof(BlockQ8_1), kQK);
    expect_size(DType::Q2_K, sizeof(BlockQ2_K), kQKK);
    expect_size(DType::Q3_K, sizeof(BlockQ3_K), kQKK);
    expect_size(DType::Q4_K, sizeof(BlockQ4_K), kQKK);
    expect_size(DType::Q5_K, sizeof(BlockQ5_K), kQKK);
    expect_size(DType::Q6_K, sizeof(BlockQ6_K), kQKK);
    expect_size(DType::Q8_K, sizeof(BlockQ8_K), kQKK);
}

TEST(ReferenceOps, reports_which_types_it_implements) {
    EXPECT_TRUE(can_dequantize(DType::Q6_K));
    EXPECT_FALSE(can_dequantize(DType::I32));
    EXPECT_TRUE(can_quantize(DType::Q8_K));
    EXPECT_TRUE(can_quantize(DType::Q4_K));
    EXPECT_FALSE(can_quantize(DType::I32));
    EXPECT_TRUE(can_vec_dot(DType::Q4_1));
    EXPECT_FALSE(can_vec_dot(DType::Q8_1));   // an activation type, never a weight
    for (const DType w : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1,
                          DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                          DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
        EXPECT_TRUE(can_vec_dot(w)) << dtype_name(w);
        EXPECT_TRUE(can_quantize(vec_dot_type(w))) << "activations for " << dtype_name(w);
    }
}

TEST(ReferenceOpsDeathTest, aborts_on_a_partial_block) {
    std::vector<float> row(48, 1.0f);
    std::vector<uint8_t> out(64);
    EXPECT_DEATH(quantize_row(DType::Q8_0, row.data(), out.data(), 48), "whole number of blocks");
}

}  // namespace
}  // namespace ladder::tensor
