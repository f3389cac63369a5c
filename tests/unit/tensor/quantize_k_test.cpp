// The K-quant encoders (Q2_K .. Q6_K): quantize -> dequantize stays within
// each type's error, a block of zeros stays zero, and blocks are independent
// (a row encodes the same alone or with others, so any split over threads
// writes the same bytes). Agreement with ggml, byte for byte, is tested on
// whole files against llama-quantize (tests/model/test_quantize.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ladder/tensor/dtype.h"
#include "ladder/tensor/k_quant_scales.h"
#include "ladder/tensor/reference_ops.h"
#include "ladder/tensor/row_validation.h"

namespace ladder::tensor {
namespace {

constexpr DType kKQuants[] = {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K};

std::vector<float> random_row(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> row(static_cast<size_t>(n));
    for (float& v : row) v = normal(rng);
    return row;
}

std::vector<uint8_t> encode(DType dtype, const std::vector<float>& row) {
    std::vector<uint8_t> bytes(*row_bytes(dtype, static_cast<int64_t>(row.size())));
    quantize_row(dtype, row.data(), bytes.data(), static_cast<int64_t>(row.size()));
    return bytes;
}

std::vector<float> decode(DType dtype, const std::vector<uint8_t>& bytes, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    dequantize_row(dtype, bytes.data(), out.data(), n);
    return out;
}

double relative_rms_error(const std::vector<float>& a, const std::vector<float>& b) {
    double err = 0.0;
    double ref = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        err += (a[i] - b[i]) * (a[i] - b[i]);
        ref += a[i] * a[i];
    }
    return std::sqrt(err / ref);
}

TEST(QuantizeK, round_trip_error_shrinks_with_the_bits) {
    // Gaussian weights: the RMS error is a fraction of the RMS value that
    // roughly halves per bit (llama.cpp's published figures are of this order).
    const struct {
        DType dtype;
        double max_error;
    } kCases[] = {{DType::Q2_K, 0.40},
                  {DType::Q3_K, 0.20},
                  {DType::Q4_K, 0.10},
                  {DType::Q5_K, 0.05},
                  {DType::Q6_K, 0.025}};
    const auto row = random_row(4096, 7);
    double previous = 1.0;
    for (const auto& c : kCases) {
        const double error = relative_rms_error(row, decode(c.dtype, encode(c.dtype, row), 4096));
        EXPECT_LT(error, c.max_error) << dtype_name(c.dtype);
        EXPECT_LT(error, previous) << dtype_name(c.dtype) << " is no better than one bit fewer";
        previous = error;
    }
}

TEST(QuantizeK, a_block_of_zeros_stays_zero) {
    const std::vector<float> zeros(512, 0.0f);
    for (const DType dtype : kKQuants) {
        for (const float v : decode(dtype, encode(dtype, zeros), 512)) {
            ASSERT_EQ(v, 0.0f) << dtype_name(dtype);
        }
    }
}

TEST(QuantizeK, super_blocks_encode_independently) {
    const auto row = random_row(1024, 11);
    for (const DType dtype : kKQuants) {
        const auto whole = encode(dtype, row);
        const std::vector<float> second_half(row.begin() + 512, row.end());
        const auto half = encode(dtype, second_half);
        EXPECT_EQ(std::memcmp(whole.data() + whole.size() / 2, half.data(), half.size()), 0)
            << dtype_name(dtype);
    }
}

TEST(QuantizeK, encodes_extreme_but_finite_blocks_to_finite_scales) {
    std::vector<float> row = random_row(256, 3);
    row[17] = 60000.0f;  // an outlier near the top of fp16's range
    row[200] = -1e-30f;  // and a value far below it
    for (const DType dtype : kKQuants) {
        const auto bytes = encode(dtype, row);
        EXPECT_FALSE(first_non_finite(dtype, bytes.data(), bytes.size())) << dtype_name(dtype);
        const auto back = decode(dtype, bytes, 256);
        EXPECT_NEAR(back[17], 60000.0f, 60000.0f * 0.3f) << dtype_name(dtype);
    }
}

TEST(QuantizeK, nearest_int_rounds_halves_to_even) {
    EXPECT_EQ(nearest_int(0.5f), 0);
    EXPECT_EQ(nearest_int(1.5f), 2);
    EXPECT_EQ(nearest_int(2.5f), 2);
    EXPECT_EQ(nearest_int(-0.5f), 0);
    EXPECT_EQ(nearest_int(-1.5f), -2);
    EXPECT_EQ(nearest_int(63.49f), 63);
    EXPECT_EQ(nearest_int(-31.6f), -32);
}

TEST(RowValidation, finds_the_first_non_finite_value_or_scale) {
    std::vector<float> floats(8, 1.0f);
    EXPECT_FALSE(first_non_finite(DType::F32, floats.data(), 32));
    floats[5] = std::nanf("");
    EXPECT_EQ(first_non_finite(DType::F32, floats.data(), 32), 5);
    floats[3] = INFINITY;
    EXPECT_EQ(first_non_finite(DType::F32, floats.data(), 32), 3);

    const std::vector<uint16_t> halves = {0x3c00, 0x7c00, 0x7e00};  // 1, inf, nan
    EXPECT_EQ(first_non_finite(DType::F16, halves.data(), 6), 1);
    const std::vector<uint16_t> bfloats = {0x3f80, 0x7fc0};  // 1, nan
    EXPECT_EQ(first_non_finite(DType::BF16, bfloats.data(), 4), 1);

    // Q4_K: d, then dmin, per 144-byte block; the second block's dmin is inf.
    std::vector<uint8_t> q4k(2 * 144, 0);
    const uint16_t inf = 0x7c00;
    std::memcpy(q4k.data() + 144 + 2, &inf, 2);
    EXPECT_EQ(first_non_finite(DType::Q4_K, q4k.data(), q4k.size()), 1);
    std::vector<int32_t> ints = {1, -1};
    EXPECT_FALSE(first_non_finite(DType::I32, ints.data(), 8));
}

}  // namespace
}  // namespace ladder::tensor
