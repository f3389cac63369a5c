// The F16-table GeGLU against GELU computed independently in double: every
// table entry is that value rounded to F16, within what the float formula may
// cost, and the gate's cut-offs at +-10 behave as ggml's do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ladder/kernels/cpu/gelu_table.h"
#include "ladder/tensor/half.h"

namespace ladder::kernels::cpu {
namespace gelu_table_test {

double gelu_tanh(double x) {
    const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(inner));
}

TEST(GeluTable, every_finite_entry_is_gelu_rounded_to_f16) {
    int n_checked = 0;
    int n_off = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const float x = tensor::fp16_to_fp32(static_cast<uint16_t>(h));
        if (!std::isfinite(x) || std::fabs(x) >= 10.0f) continue;
        const double exact = gelu_tanh(x);
        const uint16_t expected = tensor::fp32_to_fp16(static_cast<float>(exact));
        const uint16_t got = gelu_f16_table_entry(static_cast<uint16_t>(h));
        ++n_checked;
        if (got == expected) continue;
        ++n_off;
        // The reference formula computes 1 + tanh(...) in float, which cancels
        // for negative x: its error there is up to x/2 float steps of 1.
        const double f16_step = std::ldexp(1.0, std::max(-24, std::ilogb(exact) - 10));
        const double tolerance = f16_step + 0.5 * std::fabs(x) * 0x1p-23;
        ASSERT_LE(std::fabs(tensor::fp16_to_fp32(got) - exact), tolerance)
            << "gelu(" << x << ") = " << tensor::fp16_to_fp32(got) << ", exact " << exact;
    }
    // Float arithmetic lands on the other side of an F16 rounding boundary
    // now and then, never often.
    EXPECT_LT(n_off, n_checked / 20) << n_off << " of " << n_checked;
}

TEST(GeluTable, gate_reads_the_table_at_the_f16_rounded_input) {
    const std::vector<float> gate = {0.3f, -1.7f, 2.0000002f, 9.99f, -9.99f, 0.0f};
    const std::vector<float> up = {2.0f, -0.5f, 1.0f, 3.0f, 1.0f, 7.0f};
    std::vector<float> out = gate;
    gelu_mul_f16_table(out.data(), up.data(), static_cast<int64_t>(out.size()));
    for (size_t i = 0; i < gate.size(); ++i) {
        const uint16_t rounded = tensor::fp32_to_fp16(gate[i]);
        const float table = tensor::fp16_to_fp32(gelu_f16_table_entry(rounded));
        EXPECT_EQ(out[i], table * up[i]) << "gate " << gate[i];
        const double tolerance = 2e-3 * std::fabs(up[i]) * (1 + std::fabs(gate[i]));
        EXPECT_NEAR(out[i], gelu_tanh(gate[i]) * up[i], tolerance) << "gate " << gate[i];
    }
}

TEST(GeluTable, gate_is_zero_below_minus_ten_and_identity_above_ten) {
    std::vector<float> gate = {-10.0f, -50.0f, 10.0f, 1e6f};
    const std::vector<float> up = {3.0f, 3.0f, 0.5f, 2.0f};
    gelu_mul_f16_table(gate.data(), up.data(), 4);
    EXPECT_EQ(gate[0], 0.0f);
    EXPECT_EQ(gate[1], 0.0f);
    EXPECT_EQ(gate[2], 5.0f);
    EXPECT_EQ(gate[3], 2e6f);
}

TEST(GeluTable, every_path_gives_the_scalar_reference_bits) {
    // Random gates across both cut-offs, F16 rounding ties, values F16 holds
    // only as subnormals, zeros of both signs; odd lengths leave tails.
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
    std::vector<float> gate = {0.0f, -0.0f, 1e-6f, -3e-7f, 6.1e-5f, 10.0f, -10.0f, 9.999f,
                               -9.999f, 1.0009765625f, 1.00146484375f, 2.0f, -2.5f, 1e30f};
    while (gate.size() < 4099) gate.push_back(wide(rng));
    std::vector<float> up(gate.size());
    for (auto& u : up) u = wide(rng);
    const auto n = static_cast<int64_t>(gate.size());
    std::vector<float> want = gate;
    gelu_mul_f16_table_for(Isa::Scalar)(want.data(), up.data(), n);
    for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
        if (!isa_supported(isa, cpu_features())) continue;
        for (const int64_t length : {n, n - 1, int64_t{7}}) {
            std::vector<float> got = gate;
            gelu_mul_f16_table_for(isa)(got.data(), up.data(), length);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * length), 0)
                << isa_name(isa) << " length " << length;
        }
    }
}

}  // namespace gelu_table_test
}  // namespace ladder::kernels::cpu
