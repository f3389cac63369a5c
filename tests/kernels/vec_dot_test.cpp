// Every fast dot product and activation quantizer against the scalar path, bit
// for bit, on each instruction-set path this CPU runs; tensor's reference dot
// products and the scalar path against the exact dot of dequantized rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/reference_ops.h"
#include "random_rows.h"

namespace ladder::kernels::cpu {
namespace vec_dot_test {

using tensor::DType;
using namespace testing;

std::vector<Isa> fast_isas() {
    std::vector<Isa> isas;
    for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
        if (isa_supported(isa, cpu_features())) isas.push_back(isa);
    }
    return isas;
}

struct DotCase {
    DType weight_type;
    std::vector<int64_t> sizes;  // elements; odd block counts and element tails
};

std::vector<DotCase> dot_cases() {
    const std::vector<int64_t> legacy = {32, 64, 96, 160, 224, 576, 1056, 1536};
    const std::vector<int64_t> k_quants = {256, 512, 768, 1280, 2304};
    const std::vector<int64_t> floats = {1, 7, 8, 9, 33, 576, 1001};
    return {{DType::Q4_0, legacy},   {DType::Q4_1, legacy},   {DType::Q5_0, legacy},
            {DType::Q5_1, legacy},   {DType::Q8_0, legacy},   {DType::Q2_K, k_quants},
            {DType::Q3_K, k_quants}, {DType::Q4_K, k_quants}, {DType::Q5_K, k_quants},
            {DType::Q6_K, k_quants}, {DType::F16, floats},    {DType::BF16, floats},
            {DType::F32, floats}};
}

// One weight row and one activation row quantized by the reference quantizer.
struct DotInputs {
    std::vector<uint8_t> weights;
    std::vector<uint8_t> activations;
    ExactDot exact;
};

DotInputs make_inputs(std::mt19937& rng, DType weight_type, int64_t n) {
    const DType act_type = tensor::vec_dot_type(weight_type);
    DotInputs in;
    in.weights = random_weight_row(rng, weight_type, n);
    const auto x = random_floats(rng, n);
    in.activations.resize(bytes_of(act_type, n));
    cpu_kernels_for(Isa::Scalar).quantize_row(act_type)(x.data(), in.activations.data(), n);
    in.exact = exact_dot(dequantize(weight_type, in.weights.data(), n),
                         dequantize(act_type, in.activations.data(), n));
    return in;
}

// The bound on |dot - exact| / sum |w_i a_i| each type is held to, for
// tensor's reference and the scalar path alike, with the worst measured on
// this test's rows (reference | scalar path; over 400 rows per size in
// brackets). Q4_1's and Q5_1's offset term uses the activation sum s stored
// as a half (2^-11 relative), which the dequantized rows do not see; the
// others differ from the exact sum by float rounding alone.
struct AccuracyBound {
    DType weight_type;
    double bound;
};
constexpr AccuracyBound kAccuracyBounds[] = {
    {DType::Q4_0, 1e-7},  // measured 2.8e-8 | 4.2e-8 (7.1e-8)
    {DType::Q4_1, 1e-3},  // measured 3.5e-4 | 3.5e-4 (6.1e-4)
    {DType::Q5_1, 1e-3},  // measured 2.4e-4 | 2.4e-4 (5.2e-4)
    {DType::Q2_K, 1e-7},  // measured 2.1e-8 | 2.1e-8 (2.7e-8)
    {DType::Q3_K, 1e-7},  // measured 1.1e-8 | 2.1e-8 (3.1e-8)
    {DType::Q5_K, 1e-7},  // measured 2.3e-8 | 1.9e-8 (4.3e-8)
    {DType::BF16, 2e-7},  // measured 4.3e-8 | 4.3e-8 (5.7e-8)
    {DType::Q8_0, 1e-7},  // measured 2.2e-8 | 2.9e-8 (6.4e-8)
    {DType::Q5_0, 1e-7},  // measured 2.9e-8 | 4.1e-8 (5.0e-8)
    {DType::Q4_K, 1e-7},  // measured 1.4e-8 | 1.8e-8 (3.0e-8)
    {DType::Q6_K, 1e-7},  // measured 1.7e-8 | 3.3e-8 (4.6e-8)
    {DType::F16, 2e-7},   // measured 3.0e-8 | 8.7e-8 (1.2e-7)
    {DType::F32, 2e-7},   // measured 5.8e-8 | 8.7e-8 (1.1e-7)
};

double accuracy_bound(DType weight_type) {
    for (const AccuracyBound& b : kAccuracyBounds) {
        if (b.weight_type == weight_type) return b.bound;
    }
    ADD_FAILURE() << "no accuracy bound for " << tensor::dtype_name(weight_type);
    return 0.0;
}

TEST(VecDot, reference_and_scalar_path_match_exact_dot_of_dequantized_rows) {
    std::mt19937 rng(1);
    const CpuKernels& scalar = cpu_kernels_for(Isa::Scalar);
    for (const DotCase& c : dot_cases()) {
        for (const int64_t n : c.sizes) {
            for (int trial = 0; trial < 40; ++trial) {
                SCOPED_TRACE(std::string(tensor::dtype_name(c.weight_type)) +
                             " n=" + std::to_string(n));
                const DotInputs in = make_inputs(rng, c.weight_type, n);
                const float reference =
                    tensor::vec_dot(c.weight_type, in.weights.data(), in.activations.data(), n);
                const float ours =
                    scalar.vec_dot(c.weight_type)(in.weights.data(), in.activations.data(), n);
                const double bound = accuracy_bound(c.weight_type) * in.exact.magnitude;
                EXPECT_NEAR(reference, in.exact.value, bound) << "tensor's reference";
                EXPECT_NEAR(ours, in.exact.value, bound) << "the scalar path";
            }
        }
    }
}

// Every path's dot products give the scalar path's bits: the scalar table adds
// in the x86 lane order (vec_dot_scalar.cpp), so LADDER_CPU=scalar gives the
// reference engine's greedy tokens too; tensor's reference above stays the
// accuracy check.
TEST(VecDot, every_path_gives_the_same_bits) {
    const std::vector<Isa> isas = fast_isas();
    if (isas.empty()) GTEST_SKIP() << "this CPU runs only the scalar path";
    std::mt19937 rng(2);
    const CpuKernels& scalar = cpu_kernels_for(Isa::Scalar);
    for (const DotCase& c : dot_cases()) {
        for (const int64_t n : c.sizes) {
            for (int trial = 0; trial < 16; ++trial) {
                const DotInputs in = make_inputs(rng, c.weight_type, n);
                const float want =
                    scalar.vec_dot(c.weight_type)(in.weights.data(), in.activations.data(), n);
                for (const Isa isa : isas) {
                    const VecDotFn fast = cpu_kernels_for(isa).vec_dot(c.weight_type);
                    ASSERT_NE(fast, nullptr);
                    const float got = fast(in.weights.data(), in.activations.data(), n);
                    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
                        << isa_name(isa) << " " << tensor::dtype_name(c.weight_type) << " n=" << n
                        << ": " << got << " vs scalar " << want;
                    const float again = fast(in.weights.data(), in.activations.data(), n);
                    ASSERT_EQ(std::memcmp(&got, &again, sizeof got), 0) << "not deterministic";
                }
            }
        }
    }
}

TEST(VecDot, fast_paths_cover_the_target_models_weight_types) {
    for (const Isa isa : fast_isas()) {
        const CpuKernels& k = cpu_kernels_for(isa);
        EXPECT_EQ(k.isa, isa);
        for (const DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                              DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                              DType::F16, DType::BF16, DType::F32}) {
            EXPECT_NE(k.vec_dot(t), cpu_kernels_for(Isa::Scalar).vec_dot(t))
                << isa_name(isa) << " falls back to scalar for " << tensor::dtype_name(t);
        }
    }
}

// Rows that exercise quantizer edge cases: ties at .5 (amax 127 makes the Q8_0
// scale exactly 1), all-zero blocks, +a and -a both present (Q8_K takes the
// sign of the first), tiny and huge magnitudes.
std::vector<std::vector<float>> quantizer_rows(std::mt19937& rng, int64_t n) {
    std::vector<std::vector<float>> rows;
    rows.push_back(random_floats(rng, n));
    rows.push_back(random_floats(rng, n, 1e-6f));
    rows.push_back(random_floats(rng, n, 3e4f));
    std::vector<float> ties(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        ties[i] = static_cast<float>(i % 255 - 127) + 0.5f * (i % 3 == 0);
    for (int64_t i = 0; i < n; i += 32) ties[i] = (i / 32) % 2 ? 127.0f : -127.0f;
    rows.push_back(ties);
    std::vector<float> mixed = random_floats(rng, n);
    for (int64_t i = 0; i + 64 <= n; i += 64) {
        std::fill(mixed.begin() + i, mixed.begin() + i + 32, 0.0f);
        mixed[i + 40] = 5.0f;
        mixed[i + 50] = -5.0f;
    }
    if (n >= 256) std::fill(mixed.begin(), mixed.begin() + 256, 0.0f);  // a zero Q8_K block
    rows.push_back(mixed);
    return rows;
}

TEST(QuantizeRow, fast_paths_write_the_reference_bytes) {
    const std::vector<Isa> isas = fast_isas();
    if (isas.empty()) GTEST_SKIP() << "this CPU runs only the scalar path";
    std::mt19937 rng(3);
    const CpuKernels& scalar = cpu_kernels_for(Isa::Scalar);
    for (const DType type : {DType::Q8_0, DType::Q8_1, DType::Q8_K, DType::F16, DType::F32}) {
        for (const int64_t n : {256, 512, 1536, 2304}) {
            for (const auto& x : quantizer_rows(rng, n)) {
                std::vector<uint8_t> ref(bytes_of(type, n), 0xAA);
                scalar.quantize_row(type)(x.data(), ref.data(), n);
                for (const Isa isa : isas) {
                    SCOPED_TRACE(std::string(isa_name(isa)) + " " +
                                 std::string(tensor::dtype_name(type)) + " n=" + std::to_string(n));
                    std::vector<uint8_t> got(ref.size(), 0x55);
                    cpu_kernels_for(isa).quantize_row(type)(x.data(), got.data(), n);
                    size_t first_diff = 0;
                    while (first_diff < got.size() && got[first_diff] == ref[first_diff])
                        ++first_diff;
                    EXPECT_EQ(first_diff, got.size()) << "first differing byte " << first_diff;
                }
            }
        }
    }
}

}  // namespace vec_dot_test
}  // namespace ladder::kernels::cpu
