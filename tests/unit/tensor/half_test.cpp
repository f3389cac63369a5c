// fp16 and bf16 conversions: IEEE binary16 rounding checked against the
// compiler's _Float16 (an independent implementation), plus the edge cases
// spelled out, and bf16 as ggml rounds it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ladder/tensor/half.h"

namespace ladder::tensor {
namespace {

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t bits) { return std::bit_cast<float>(bits); }

bool is_half_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }

TEST(Fp16, widens_every_non_nan_half_exactly_and_narrows_back_to_the_same_bits) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const auto half = static_cast<uint16_t>(h);
        if (is_half_nan(half)) continue;
        const float f = fp16_to_fp32(half);
        EXPECT_EQ(fp32_to_fp16(f), half) << "half 0x" << std::hex << h << " -> " << f;
#if defined(__FLT16_MAX__)
        EXPECT_EQ(bits_of(f), bits_of(static_cast<float>(std::bit_cast<_Float16>(half))))
            << "half 0x" << std::hex << h;
#endif
    }
}

TEST(Fp16, rounds_like_compiler_float16_around_every_half_value) {
#if !defined(__FLT16_MAX__)
    GTEST_SKIP() << "compiler has no _Float16 to compare with";
#else
    // For each half value: the float itself, its float neighbours, the exact
    // midpoint to the next half and the midpoint's neighbours. That covers
    // every rounding decision (down, tie-to-even, up) in every binade.
    int n_checked = 0;
    for (uint32_t h = 0; h < 0x7c00; ++h) {
        const float lo = fp16_to_fp32(static_cast<uint16_t>(h));
        const float hi = h + 1 == 0x7c00 ? 65536.0f : fp16_to_fp32(static_cast<uint16_t>(h + 1));
        const float mid = lo + (hi - lo) / 2;  // exact: half spacing is a power of two
        for (const float base : {lo, mid}) {
            for (const float f : {std::nextafter(base, 0.0f), base, std::nextafter(base, 1e9f)}) {
                for (const float v : {f, -f}) {
                    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(v));
                    ASSERT_EQ(fp32_to_fp16(v), expected)
                        << "float " << v << " (0x" << std::hex << bits_of(v) << ")";
                    ++n_checked;
                }
            }
        }
    }
    EXPECT_GT(n_checked, 300000);
#endif
}

TEST(Fp16, handles_overflow_subnormals_and_signed_zero) {
    EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);            // largest half
    EXPECT_EQ(fp32_to_fp16(65519.99f), 0x7bff);           // below the midpoint
    EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);            // midpoint ties to even: inf
    EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-1e10f), 0xfc00);
    EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
    EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001);            // smallest subnormal
    EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);            // half of it ties to even zero
    EXPECT_EQ(fp32_to_fp16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
    EXPECT_EQ(fp32_to_fp16(0x1.8p-24f), 0x0002);          // 1.5 ulp ties to even 2
    EXPECT_EQ(fp32_to_fp16(0x1p-14f), 0x0400);            // smallest normal
    EXPECT_EQ(fp32_to_fp16(0x1.ff8p-15f), 0x03ff);        // largest subnormal
    EXPECT_EQ(fp32_to_fp16(0x1.ffcp-15f), 0x0400);        // tie rounds up into the normals
    EXPECT_EQ(fp32_to_fp16(1e-30f), 0x0000);
    EXPECT_EQ(fp32_to_fp16(-1e-30f), 0x8000);             // sign survives underflow
    EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);     // tie, even is 1.0
    EXPECT_EQ(fp32_to_fp16(1.0f + 0x1.8p-10f), 0x3c02);   // tie, even is up

    EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);
    EXPECT_EQ(fp16_to_fp32(0x3555), 0x1.554p-2f);
    EXPECT_EQ(bits_of(fp16_to_fp32(0x8000)), 0x80000000u);
    EXPECT_EQ(fp16_to_fp32(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(Fp16, keeps_nan_a_nan_with_its_sign_and_quiets_signaling_ones) {
    const uint16_t quiet = fp32_to_fp16(std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(is_half_nan(quiet));
    EXPECT_TRUE(quiet & 0x0200) << "quiet bit set";
    // A float NaN whose payload sits only in the low 13 bits must not become inf.
    EXPECT_TRUE(is_half_nan(fp32_to_fp16(float_of(0x7f800001u))));
    EXPECT_EQ(fp32_to_fp16(float_of(0xffc00000u)) & 0x8000, 0x8000);

    // Signaling half NaN -> quiet float NaN (as F16C hardware does), payload kept.
    const uint32_t widened = bits_of(fp16_to_fp32(0x7d01));
    EXPECT_TRUE(std::isnan(float_of(widened)));
    EXPECT_EQ(widened, 0x7fe02000u);
    EXPECT_EQ(bits_of(fp16_to_fp32(0xfe00)), 0xffc00000u);
}

TEST(Bf16, rounds_to_nearest_even_like_ggml) {
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(fp32_to_bf16(float_of(0x3f808000u)), 0x3f80);  // tie, even stays
    EXPECT_EQ(fp32_to_bf16(float_of(0x3f818000u)), 0x3f82);  // tie, odd rounds up
    EXPECT_EQ(fp32_to_bf16(float_of(0x3f808001u)), 0x3f81);  // above the tie
    EXPECT_EQ(fp32_to_bf16(float_of(0x3f807fffu)), 0x3f80);  // below the tie
    EXPECT_EQ(fp32_to_bf16(float_of(0x7f7fffffu)), 0x7f80);  // FLT_MAX rounds to inf
    EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
    EXPECT_EQ(fp32_to_bf16(-0.0f), 0x8000);
    EXPECT_EQ(fp32_to_bf16(float_of(0x00018000u)), 0x0002);  // subnormals are kept
}

TEST(Bf16, forces_nan_quiet_and_never_rounds_it_to_inf) {
    EXPECT_EQ(fp32_to_bf16(float_of(0x7f800001u)), 0x7fc0);
    EXPECT_EQ(fp32_to_bf16(float_of(0xff80ffffu)), 0xffc0);
    EXPECT_EQ(fp32_to_bf16(float_of(0x7fc00000u)), 0x7fc0);
}

TEST(Bf16, widens_by_shifting_into_the_top_half) {
    for (uint32_t h = 0; h <= 0xffff; h += 7) {
        const auto half = static_cast<uint16_t>(h);
        EXPECT_EQ(bits_of(bf16_to_fp32(half)), h << 16);
        if (!std::isnan(bf16_to_fp32(half))) {
            EXPECT_EQ(fp32_to_bf16(bf16_to_fp32(half)), half);
        }
    }
}

}  // namespace
}  // namespace ladder::tensor
