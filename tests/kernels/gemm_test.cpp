// The multi-row kernels (GemmFn) and matmul over them: every output equals the
// single-row vec_dot of its table for that (weight row, activation row) pair,
// bit for bit, for every T, tile tail, block count and thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/matmul.h"
#include "ladder/kernels/cpu/quantize_activations.h"
#include "random_rows.h"

namespace ladder::kernels::cpu {
namespace gemm_test {

using tensor::DType;
using namespace testing;

constexpr int64_t kMaxT = 64;
constexpr int64_t kNOut = 13;  // not a multiple of any tile's weight rows

std::vector<Isa> simd_isas() {
    std::vector<Isa> isas;
    for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
        if (isa_supported(isa, cpu_features())) isas.push_back(isa);
    }
    return isas;
}

struct Case {
    DType dtype;
    int64_t n_in;
    std::vector<uint8_t> weights;  // [kNOut] rows
    std::vector<uint8_t> acts;     // [kMaxT] rows of vec_dot_type
    size_t weight_row_bytes;
    size_t act_row_bytes;
};

// Random weights, and activations quantized by the table under test (each
// row's largest element takes the end code, +-127).
Case make_case(std::mt19937& rng, const CpuKernels& k, DType dtype, int64_t n_in,
               bool any_q8_code) {
    Case c{dtype, n_in, {}, {}, bytes_of(dtype, n_in), 0};
    for (int64_t r = 0; r < kNOut; ++r) {
        auto row = random_weight_row(rng, dtype, n_in);
        if (any_q8_code && dtype == DType::Q8_0) {  // -128 too: files may hold it
            auto* b = reinterpret_cast<tensor::BlockQ8_0*>(row.data());
            for (int64_t i = 0; i < n_in / tensor::kQK; ++i) {
                for (auto& q : b[i].qs) q = static_cast<int8_t>(rng());
            }
        }
        c.weights.insert(c.weights.end(), row.begin(), row.end());
    }
    const DType act = tensor::vec_dot_type(dtype);
    c.act_row_bytes = bytes_of(act, n_in);
    c.acts.resize(c.act_row_bytes * kMaxT);
    for (int64_t t = 0; t < kMaxT; ++t) {
        const auto x = random_floats(rng, n_in);
        k.quantize_row(act)(x.data(), c.acts.data() + t * c.act_row_bytes, n_in);
    }
    return c;
}

// want[t * kNOut + r] from the table's single-row kernel.
std::vector<float> single_row_results(const CpuKernels& k, const Case& c) {
    std::vector<float> want(kMaxT * kNOut);
    for (int64_t t = 0; t < kMaxT; ++t) {
        for (int64_t r = 0; r < kNOut; ++r) {
            want[t * kNOut + r] = k.vec_dot(c.dtype)(c.weights.data() + r * c.weight_row_bytes,
                                                     c.acts.data() + t * c.act_row_bytes, c.n_in);
        }
    }
    return want;
}

struct DTypeBlocks {
    DType dtype;
    int64_t block_elements;
};

const DTypeBlocks kGemmTypes[] = {{DType::Q4_0, tensor::kQK},
                                  {DType::Q4_1, tensor::kQK},
                                  {DType::Q5_0, tensor::kQK},
                                  {DType::Q5_1, tensor::kQK},
                                  {DType::Q8_0, tensor::kQK},
                                  {DType::Q2_K, tensor::kQKK},
                                  {DType::Q3_K, tensor::kQKK},
                                  {DType::Q4_K, tensor::kQKK},
                                  {DType::Q5_K, tensor::kQKK},
                                  {DType::Q6_K, tensor::kQKK},
                                  // BF16 in chunks of 8, and rows with a tail.
                                  {DType::BF16, 8},
                                  {DType::BF16, 4},
                                  // F16 in chunks of 8, and rows with a tail.
                                  {DType::F16, 8},
                                  {DType::F16, 4}};

TEST(Gemm, simd_paths_have_multi_row_kernels_for_every_quantized_weight_type) {
    for (const Isa isa : simd_isas()) {
        for (const DTypeBlocks& type : kGemmTypes) {
            EXPECT_NE(cpu_kernels_for(isa).gemm(type.dtype), nullptr)
                << isa_name(isa) << " " << tensor::dtype_name(type.dtype);
        }
    }
}

TEST(Gemm, each_output_equals_the_single_row_kernel_bit_for_bit_for_every_t) {
    std::mt19937 rng(11);
    for (const Isa isa : simd_isas()) {
        const CpuKernels& k = cpu_kernels_for(isa);
        for (const DTypeBlocks& type : kGemmTypes) {
            const GemmFn gemm = k.gemm(type.dtype);
            if (gemm == nullptr) continue;
            // 100 blocks: wider than the avx512 pair kernels' panel, which falls back.
            for (const int64_t n_blocks : {1, 3, 7, 100}) {
                for (const bool any_q8_code : {false, true}) {
                    SCOPED_TRACE(std::string(isa_name(isa)) + " " +
                                 std::string(tensor::dtype_name(type.dtype)) +
                                 " blocks=" + std::to_string(n_blocks));
                    const Case c =
                        make_case(rng, k, type.dtype, n_blocks * type.block_elements, any_q8_code);
                    const auto want = single_row_results(k, c);
                    // Output rows kStride apart; the gap between them must stay untouched.
                    constexpr int64_t kStride = kNOut + 3;
                    for (int64_t n_rows = 1; n_rows <= kMaxT; ++n_rows) {
                        std::vector<float> out(kMaxT * kStride, -7.0f);
                        gemm(c.weights.data(), c.weight_row_bytes, kNOut, c.acts.data(),
                             c.act_row_bytes, n_rows, c.n_in, out.data(), kStride);
                        for (int64_t t = 0; t < kMaxT; ++t) {
                            if (t < n_rows) {
                                ASSERT_EQ(std::memcmp(&out[t * kStride], &want[t * kNOut],
                                                      kNOut * sizeof(float)),
                                          0)
                                    << "row t=" << t << " differs from vec_dot at T=" << n_rows;
                            }
                            for (int64_t r = (t < n_rows ? kNOut : 0); r < kStride; ++r) {
                                ASSERT_EQ(out[t * kStride + r], -7.0f)
                                    << "wrote outside the outputs at t=" << t << " r=" << r;
                            }
                        }
                    }
                }
            }
        }
    }
}

TEST(Gemm, matmul_equals_the_single_row_kernel_for_any_t_and_thread_count) {
    std::mt19937 rng(12);
    util::ThreadPool pools[] = {util::ThreadPool(1), util::ThreadPool(2), util::ThreadPool(3)};
    for (const Isa isa : simd_isas()) {
        const CpuKernels& k = cpu_kernels_for(isa);
        for (const DTypeBlocks& type : kGemmTypes) {
            if (k.gemm(type.dtype) == nullptr) continue;
            SCOPED_TRACE(std::string(isa_name(isa)) + " " +
                         std::string(tensor::dtype_name(type.dtype)));
            const Case c = make_case(rng, k, type.dtype, 5 * type.block_elements, false);
            const auto want = single_row_results(k, c);
            const WeightMatrix w = make_weight_matrix(c.dtype, c.weights.data(), kNOut, c.n_in);
            for (int64_t n_rows = 1; n_rows <= kMaxT; ++n_rows) {
                const QuantizedActivations x{tensor::vec_dot_type(c.dtype), c.acts.data(), n_rows,
                                             c.n_in, c.act_row_bytes};
                util::ThreadPool& pool = pools[n_rows % 3];
                std::vector<float> out(n_rows * kNOut);
                matmul(k, w, x, out.data(), pool);
                ASSERT_EQ(std::memcmp(out.data(), want.data(), out.size() * sizeof(float)), 0)
                    << "T=" << n_rows << " threads=" << pool.n_threads();
            }
        }
    }
}

}  // namespace gemm_test
}  // namespace ladder::kernels::cpu
