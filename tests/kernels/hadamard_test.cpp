// The Walsh-Hadamard rotation of a quantized KV cache: the kernel against the
// matrix llama.cpp builds (Sylvester's construction, 1 / sqrt(n) scaled), and
// which cache shapes rotate by how much (llama.cpp's rule).
#include "ladder/kernels/cpu/hadamard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ladder/model/paged_attention.h"
#include "random_rows.h"

namespace ladder::kernels::cpu {
namespace {

using tensor::DType;
using testing::random_floats;

// H[i][j] of the n x n Sylvester matrix: (-1)^popcount(i & j) / sqrt(n).
double sylvester(int32_t n, int32_t i, int32_t j) {
    return (__builtin_popcount(static_cast<unsigned>(i & j)) % 2 == 0 ? 1.0 : -1.0) /
           std::sqrt(static_cast<double>(n));
}

TEST(Hadamard, each_run_is_multiplied_by_the_sylvester_matrix) {
    std::mt19937 rng(7);
    for (const int32_t n : {64, 128, 256}) {
        const int32_t n_runs = 5;
        const std::vector<float> x = random_floats(rng, int64_t{n} * n_runs);
        std::vector<float> rotated = x;
        rotate_hadamard(rotated.data(), static_cast<int64_t>(rotated.size()), n);
        for (int32_t r = 0; r < n_runs; ++r) {
            for (int32_t i = 0; i < n; ++i) {
                double want = 0.0;
                for (int32_t j = 0; j < n; ++j) want += sylvester(n, i, j) * x[r * n + j];
                EXPECT_NEAR(rotated[r * n + i], want, 1e-5) << "n " << n << " run " << r;
            }
        }
    }
}

TEST(Hadamard, rotating_twice_gives_the_values_back) {
    std::mt19937 rng(8);
    const std::vector<float> x = random_floats(rng, 4 * 64, 3.0f);
    std::vector<float> twice = x;
    rotate_hadamard(twice.data(), static_cast<int64_t>(twice.size()), 64);
    rotate_hadamard(twice.data(), static_cast<int64_t>(twice.size()), 64);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(twice[i], x[i], 1e-5);
}

TEST(Hadamard, spreads_an_outlier_over_its_run) {
    std::vector<float> x(64, 0.0f);
    x[5] = 8.0f;
    rotate_hadamard(x.data(), 64, 64);
    for (const float v : x) EXPECT_FLOAT_EQ(std::fabs(v), 1.0f);
}

model::KvCacheShape shape(DType key, DType value, int32_t head_dim) {
    model::KvCacheShape s;
    s.n_layers = 1;
    s.n_kv_heads = 2;
    s.head_dim = head_dim;
    s.types = {key, value};
    return s;
}

TEST(KvRotation, quantized_halves_rotate_as_llama_cpp_decides) {
    // K by the largest power of two of 64 or more dividing head_dim, V by 64.
    EXPECT_EQ(model::key_rotation(shape(DType::Q8_0, DType::Q8_0, 64)), 64);
    EXPECT_EQ(model::key_rotation(shape(DType::Q8_0, DType::Q8_0, 256)), 256);
    EXPECT_EQ(model::key_rotation(shape(DType::Q4_0, DType::F16, 192)), 64);
    EXPECT_EQ(model::value_rotation(shape(DType::Q8_0, DType::Q8_0, 256)), 64);
    EXPECT_EQ(model::value_rotation(shape(DType::F16, DType::Q4_0, 128)), 64);
    // Unquantized halves, and heads that are not a multiple of 64, stay as they are.
    EXPECT_EQ(model::key_rotation(shape(DType::F16, DType::Q8_0, 64)), 0);
    EXPECT_EQ(model::value_rotation(shape(DType::Q8_0, DType::BF16, 64)), 0);
    EXPECT_EQ(model::key_rotation(shape(DType::Q8_0, DType::Q8_0, 96)), 0);
    EXPECT_EQ(model::value_rotation(shape(DType::Q8_0, DType::Q8_0, 32)), 0);
}

}  // namespace
}  // namespace ladder::kernels::cpu
