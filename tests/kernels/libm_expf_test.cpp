// libm_expf_avx2 gives the C library's expf bit for bit (what llama.cpp's
// flash-attention softmax calls), and the online softmax of a quantized cache
// gives the same weights, rescales and sum on every path.
#include "ladder/kernels/cpu/libm_expf_avx2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/cpu_features.h"

namespace ladder::kernels::cpu {
namespace {

uint32_t bits(float x) {
    uint32_t u = 0;
    std::memcpy(&u, &x, sizeof(u));
    return u;
}

LADDER_AVX2 void expf_x8(const float* x, float* y) {
    _mm256_storeu_ps(y, libm_expf_avx2(_mm256_loadu_ps(x)));
}

// Every n-th float between two bit patterns, both ends included, plus the edges.
std::vector<float> sample_floats(uint32_t from, uint32_t to, uint32_t stride) {
    std::vector<float> xs;
    for (uint64_t u = from; u <= to; u += stride) {
        float x = 0.0f;
        const auto u32 = static_cast<uint32_t>(u);
        std::memcpy(&x, &u32, sizeof(x));
        xs.push_back(x);
    }
    return xs;
}

TEST(LibmExpf, every_lane_is_the_libraries_expf) {
    if (!isa_supported(Isa::Avx2, cpu_features())) GTEST_SKIP() << "no AVX2 on this CPU";
    // Negative floats from -0 to -128 (softmax arguments are never positive),
    // positives up to the overflow edge and beyond, and the special values.
    std::vector<float> xs = sample_floats(0x80000000u, 0xc3000000u, 37);
    const std::vector<float> positive = sample_floats(0x00000000u, 0x42c80000u, 997);
    xs.insert(xs.end(), positive.begin(), positive.end());
    for (const float edge : {libm_expf_constants::kUnderflow, libm_expf_constants::kMayUnderflow,
                             libm_expf_constants::kOverflow, -88.0f, 88.0f, -103.5f, -0.0f}) {
        for (float x = edge, k = 0; k < 40; ++k) {
            xs.push_back(x);
            x = std::nextafter(x, 0.0f);
        }
        for (float x = edge, k = 0; k < 40; ++k) {
            xs.push_back(x);
            x = std::nextafter(x, -std::numeric_limits<float>::infinity());
        }
    }
    xs.insert(xs.end(),
              {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
               std::numeric_limits<float>::quiet_NaN(), std::nanf("7")});
    while (xs.size() % 8 != 0) xs.push_back(0.0f);
    std::vector<float> got(xs.size());
    for (size_t i = 0; i < xs.size(); i += 8) expf_x8(xs.data() + i, got.data() + i);
    int64_t mismatches = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        const float want = std::exp(xs[i]);
        const bool same = std::isnan(want) ? std::isnan(got[i]) : bits(want) == bits(got[i]);
        if (!same && ++mismatches <= 10) {
            ADD_FAILURE() << "expf(" << std::hexfloat << xs[i] << ") = " << want << ", got "
                          << got[i];
        }
    }
    EXPECT_EQ(mismatches, 0) << "of " << xs.size() << " inputs";
}

TEST(LibmExpf, online_softmax_gives_the_scalar_paths_bits) {
    if (!isa_supported(Isa::Avx2, cpu_features())) GTEST_SKIP() << "no AVX2 on this CPU";
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    for (const int32_t n : {1, 2, 7, 8, 9, 31, 64, 100, 1000}) {
        for (int round = 0; round < 4; ++round) {
            std::vector<float> scores(static_cast<size_t>(n));
            for (auto& s : scores) s = normal(rng);
            // Rising runs (a new maximum at every key), ties and far outliers.
            if (round == 1) {
                for (int32_t i = 0; i < n; ++i) scores[static_cast<size_t>(i)] = 0.01f * i;
            }
            if (round == 2 && n > 3) scores[2] = scores[1] = scores[3];
            if (round == 3) scores[0] = 150.0f;
            std::vector<float> want_weights = scores;
            std::vector<float> got_weights = scores;
            std::vector<float> want_rescales(scores.size());
            std::vector<float> got_rescales(scores.size());
            const float want_sum =
                detail::online_softmax_scalar(want_weights.data(), want_rescales.data(), n);
            const float got_sum =
                detail::online_softmax_avx2(got_weights.data(), got_rescales.data(), n);
            EXPECT_EQ(bits(got_sum), bits(want_sum)) << n << " scores, round " << round;
            EXPECT_EQ(std::memcmp(got_weights.data(), want_weights.data(), n * sizeof(float)), 0)
                << n << " scores, round " << round;
            EXPECT_EQ(std::memcmp(got_rescales.data(), want_rescales.data(), n * sizeof(float)), 0)
                << n << " scores, round " << round;
        }
    }
}

}  // namespace
}  // namespace ladder::kernels::cpu
