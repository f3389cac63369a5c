// exp(x) in float the way vectorised inference kernels compute it (the Arm
// optimized-routines method that llama.cpp's x86 softmax and SiLU use):
// x = n ln2 + b, exp(x) = 2^n (1 + p(b)) with a degree-5 polynomial p.
// It differs from libm's expf in the last bit for some inputs; matching it is
// what keeps softmax and SiLU bit-identical with the reference engine.
// fast_exp_avx2.h computes the same function 8 lanes at a time, bit for bit.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace ladder::kernels::cpu {

// The constants are shared with the AVX2 version so the two cannot drift apart.
namespace fast_exp_constants {
constexpr float kShift = 0x1.8p23f;  // adding it rounds to an integer
constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kLn2High = 0x1.62e4p-1f;  // ln 2 split in two for an exact reduction
constexpr float kLn2Low = 0x1.7f7d1cp-20f;
constexpr float kC1 = 0x1.ffffecp-1f;  // polynomial coefficients
constexpr float kC2 = 0x1.fffdb6p-2f;
constexpr float kC3 = 0x1.555e66p-3f;
constexpr float kC4 = 0x1.573e2ep-5f;
constexpr float kC5 = 0x1.0e4020p-7f;
}  // namespace fast_exp_constants

inline float fast_exp(float x) {
    using namespace fast_exp_constants;
    // A NaN leaves as itself, quieted. Left to the arithmetic below, which of
    // two differently signed NaNs an fma returns depends on how the compiler
    // ordered its operands, and the scalar and vector paths would disagree.
    if (std::isnan(x)) return x + x;
    const float z = std::fma(x, kLog2e, kShift);
    const float n = z - kShift;  // round(x / ln 2)
    const float b = std::fma(-n, kLn2Low, std::fma(-n, kLn2High, x));
    const uint32_t e = std::bit_cast<uint32_t>(z) << 23;
    const float scale = std::bit_cast<float>(e + std::bit_cast<uint32_t>(1.0f));  // 2^n
    const float b2 = b * b;
    const float poly =
        std::fma(std::fma(std::fma(kC5, b, kC4), b2, std::fma(kC3, b, kC2)), b2, kC1 * b);
    if (!(std::fabs(n) > 126.0f)) return std::fma(poly, scale, scale);
    // 2^n does not fit one float exponent: apply it in two factors, or
    // saturate to 0 / infinity far out.
    const uint32_t bias = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = std::bit_cast<float>(bias + 0x7f000000u);
    const float s2 = std::bit_cast<float>(e - bias);
    if (std::fabs(n) > 192.0f) return s1 * s1;
    return std::fma(s2, poly, s2) * s1;
}

}  // namespace ladder::kernels::cpu
