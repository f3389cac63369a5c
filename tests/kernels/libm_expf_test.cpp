// libm_expf_avx2 and libm_expf_avx512 give the C library's expf bit for bit
// (what llama.cpp's flash-attention softmax calls), and the online softmax of
// a quantized cache gives the same weights, rescales and sum on every path.
#include "ladder/kernels/cpu/libm_expf_avx512.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
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

LADDER_AVX2 void expf_x8_avx2(const float* x, float* y) {
    _mm256_storeu_ps(y, libm_expf_avx2(_mm256_loadu_ps(x)));
}

LADDER_AVX512 void expf_x8_avx512(const float* x, float* y) {
    _mm256_storeu_ps(y, libm_expf_avx512(_mm256_loadu_ps(x)));
}

using ExpfX8 = void (*)(const float* x, float* y);
using OnlineSoftmax = void (*)(float* scores, float* rescales, int32_t n, int32_t n_heads,
                              float* sums);

// The paths this CPU runs, with their expf and online softmax.
struct Path {
    Isa isa;
    ExpfX8 expf_x8;
    OnlineSoftmax online_softmax;
};

std::vector<Path> supported_paths() {
    std::vector<Path> paths;
    for (const Path& path : {Path{Isa::Avx2, expf_x8_avx2, detail::online_softmax_avx2},
                             Path{Isa::Avx512, expf_x8_avx512, detail::online_softmax_avx512}}) {
        if (isa_supported(path.isa, cpu_features())) paths.push_back(path);
    }
    return paths;
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
    if (supported_paths().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
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
    for (const Path& path : supported_paths()) {
        std::vector<float> got(xs.size());
        for (size_t i = 0; i < xs.size(); i += 8) path.expf_x8(xs.data() + i, got.data() + i);
        int64_t mismatches = 0;
        for (size_t i = 0; i < xs.size(); ++i) {
            const float want = std::exp(xs[i]);
            const bool same = std::isnan(want) ? std::isnan(got[i]) : bits(want) == bits(got[i]);
            if (!same && ++mismatches <= 10) {
                ADD_FAILURE() << isa_name(path.isa) << ": expf(" << std::hexfloat << xs[i]
                              << ") = " << want << ", got " << got[i];
            }
        }
        EXPECT_EQ(mismatches, 0) << isa_name(path.isa) << ": of " << xs.size() << " inputs";
    }
}

// Scores of one head for a round: normal ones, then rising and falling runs
// (a new maximum at every key, or none), ties, far outliers, NaNs (never the
// maximum) and signed zeros (of equal maxima the earlier stays).
std::vector<float> round_scores(int round, int32_t n, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::vector<float> scores(static_cast<size_t>(n));
    for (auto& s : scores) s = normal(rng);
    for (int32_t i = 0; i < n; ++i) {
        float& s = scores[static_cast<size_t>(i)];
        if (round == 1) s = 0.01f * i;
        if (round == 4) s = -0.01f * i;
        if (round == 5 && i % 3 == 0) s = std::numeric_limits<float>::quiet_NaN();
        if (round == 6) s = i % 2 == 0 ? -0.0f : 0.0f;
    }
    if (round == 2 && n > 3) scores[2] = scores[1] = scores[3];
    if (round == 3) scores[0] = 150.0f;
    return scores;
}

TEST(LibmExpf, online_softmax_gives_the_scalar_paths_bits) {
    if (supported_paths().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    std::mt19937 rng(11);
    constexpr int kRounds = 7;
    for (const int32_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 64, 100, 1000}) {
        for (const int32_t n_heads : {1, 3, 8}) {
            // Head h takes round (first + h) % kRounds: the heads' chains differ.
            for (int first = 0; first < kRounds; ++first) {
                std::vector<float> scores;
                for (int32_t h = 0; h < n_heads; ++h) {
                    const std::vector<float> head = round_scores((first + h) % kRounds, n, rng);
                    scores.insert(scores.end(), head.begin(), head.end());
                }
                std::vector<float> want_weights = scores;
                std::vector<float> want_rescales(scores.size());
                std::vector<float> want_sums(static_cast<size_t>(n_heads));
                detail::online_softmax_scalar(want_weights.data(), want_rescales.data(), n,
                                              n_heads, want_sums.data());
                for (const Path& path : supported_paths()) {
                    std::vector<float> got_weights = scores;
                    std::vector<float> got_rescales(scores.size());
                    std::vector<float> got_sums(static_cast<size_t>(n_heads));
                    path.online_softmax(got_weights.data(), got_rescales.data(), n, n_heads,
                                        got_sums.data());
                    const std::string where = std::string(isa_name(path.isa)) + ", " +
                                              std::to_string(n) + " scores, " +
                                              std::to_string(n_heads) + " heads from round " +
                                              std::to_string(first);
                    const size_t bytes = scores.size() * sizeof(float);
                    EXPECT_EQ(std::memcmp(got_sums.data(), want_sums.data(),
                                          want_sums.size() * sizeof(float)),
                              0)
                        << where;
                    EXPECT_EQ(std::memcmp(got_weights.data(), want_weights.data(), bytes), 0)
                        << where;
                    EXPECT_EQ(std::memcmp(got_rescales.data(), want_rescales.data(), bytes), 0)
                        << where;
                }
            }
        }
    }
}

}  // namespace
}  // namespace ladder::kernels::cpu
