// fast_exp and silu_mul: the scalar references against libm, and every fast
// path against them bit for bit, including NaN, infinities and the far tails
// where 2^n leaves the float exponent range.
#include "ladder/kernels/cpu/activations.h"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/fast_exp.h"
#include "ladder/kernels/cpu/fast_exp_avx2.h"

namespace ladder::kernels::cpu {
namespace activations_test {

bool has_avx2() { return isa_supported(Isa::Avx2, cpu_features()); }

std::string hex(float x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%a (0x%08x)", static_cast<double>(x),
                  std::bit_cast<uint32_t>(x));
    return buffer;
}

// Inputs where fast_exp changes branch or saturates, plus the IEEE specials.
std::vector<float> special_inputs() {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    std::vector<float> x = {
        0.0f,    -0.0f,   kInf,   -kInf,   std::nanf(""), -std::nanf(""),
        1e-45f,  -1e-45f, 1e-38f, 88.0f,   88.7f,         89.0f,
        -87.0f,  -87.4f,  -88.0f, -103.0f, -104.0f,       -126.0f,
        -133.0f, 126.0f,  133.0f, 3e38f,   -3e38f,        std::numeric_limits<float>::max()};
    // NaNs with other payloads and both signs, quiet and signaling.
    for (const uint32_t bits : {0x7fc00001u, 0xffc12345u, 0x7f800001u, 0xff80abcdu, 0x7fffffffu}) {
        x.push_back(std::bit_cast<float>(bits));
    }
    // Both sides of every |n| = 126 and 192 boundary (x near n ln 2).
    for (const float n : {125.5f, 126.5f, 191.5f, 192.5f}) {
        for (const float sign : {1.0f, -1.0f}) {
            const float centre = sign * n * 0.693147180559945f;
            float lo = centre;
            float hi = centre;
            for (int i = 0; i < 64; ++i) {
                lo = std::nextafter(lo, -1e9f);
                hi = std::nextafter(hi, 1e9f);
                x.push_back(lo);
                x.push_back(hi);
            }
        }
    }
    return x;
}

// A sweep of every 1009th float bit pattern: all exponents, both signs, and
// mantissas that are not multiples of a power of two.
std::vector<float> swept_inputs() {
    std::vector<float> x;
    for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 1009) {
        x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    }
    return x;
}

__attribute__((target("avx2,fma,f16c"))) void fast_exp_avx2_all(const std::vector<float>& x,
                                                                std::vector<float>& out) {
    out.resize(x.size() / 8 * 8);
    for (size_t i = 0; i + 8 <= x.size(); i += 8) {
        _mm256_storeu_ps(out.data() + i, fast_exp_avx2(_mm256_loadu_ps(x.data() + i)));
    }
}

TEST(FastExp, scalar_is_within_two_ulp_of_libm_exp) {
    for (float x = -87.0f; x < 88.0f; x += 0.013f) {
        const float got = fast_exp(x);
        const float want = std::exp(x);
        const float ulp = std::nextafter(want, std::numeric_limits<float>::infinity()) - want;
        EXPECT_LE(std::fabs(got - want), 2.0f * ulp) << "x=" << x;
    }
    EXPECT_EQ(fast_exp(0.0f), 1.0f);
    EXPECT_EQ(fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
    EXPECT_EQ(fast_exp(std::numeric_limits<float>::infinity()),
              std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(fast_exp(std::nanf(""))));
}

// attend_head's SIMD max may keep -0 where the reference keeps +0; this is
// why that cannot change a result.
TEST(FastExp, both_zeros_give_the_same_bits) {
    EXPECT_EQ(std::bit_cast<uint32_t>(fast_exp(0.0f)), std::bit_cast<uint32_t>(fast_exp(-0.0f)));
}

TEST(FastExp, avx2_matches_scalar_bit_for_bit) {
    if (!has_avx2()) GTEST_SKIP() << "no AVX2";
    for (const auto& inputs : {special_inputs(), swept_inputs()}) {
        std::vector<float> x = inputs;
        while (x.size() % 8 != 0) x.push_back(1.0f);
        std::vector<float> got;
        fast_exp_avx2_all(x, got);
        int n_failed = 0;
        for (size_t i = 0; i < x.size() && n_failed < 10; ++i) {
            const float want = fast_exp(x[i]);
            if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want)) {
                ++n_failed;
                ADD_FAILURE() << "x=" << hex(x[i]) << " scalar " << hex(want) << " avx2 "
                              << hex(got[i]);
            }
        }
    }
}

TEST(SiluMul, scalar_matches_formula_in_double) {
    std::mt19937 rng(21);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::vector<float> gate(1000);
    std::vector<float> up(1000);
    for (auto& g : gate) g = normal(rng);
    for (auto& u : up) u = normal(rng);
    std::vector<float> out = gate;
    silu_mul_for(Isa::Scalar)(out.data(), up.data(), static_cast<int64_t>(out.size()));
    for (size_t i = 0; i < gate.size(); ++i) {
        const double g = gate[i];
        const double want = g / (1.0 + std::exp(-g)) * up[i];
        EXPECT_NEAR(out[i], want, 1e-6 * std::fabs(want) + 1e-30) << "gate " << gate[i];
    }
}

TEST(SiluMul, avx2_matches_scalar_bit_for_bit_including_tails) {
    if (!has_avx2()) GTEST_SKIP() << "no AVX2";
    std::mt19937 rng(22);
    std::vector<float> gate = special_inputs();
    std::uniform_real_distribution<float> wide(-120.0f, 120.0f);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    while (gate.size() < 5000) gate.push_back(gate.size() % 2 ? wide(rng) : normal(rng));
    std::vector<float> up(gate.size());
    for (auto& u : up) u = normal(rng);
    up[3] = std::numeric_limits<float>::infinity();
    up[7] = std::nanf("");  // gate[7] is finite: one NaN per element, no payload race
    for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, int64_t{31},
                            int64_t{1003}, static_cast<int64_t>(gate.size())}) {
        std::vector<float> want = gate;
        std::vector<float> got = gate;
        silu_mul_for(Isa::Scalar)(want.data(), up.data(), n);
        silu_mul_for(Isa::Avx2)(got.data(), up.data(), n);
        for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
                << "n=" << n << " i=" << i << " gate " << hex(gate[i]) << " up " << hex(up[i])
                << ": scalar " << hex(want[i]) << " avx2 " << hex(got[i]);
        }
    }
}

}  // namespace activations_test
}  // namespace ladder::kernels::cpu
