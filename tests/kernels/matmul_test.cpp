// matmul: each output is the vec_dot of its weight row and activation row, and
// a row's result is bit-identical whatever T, thread count or kernel tiling.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/matmul.h"
#include "ladder/kernels/cpu/quantize_activations.h"
#include "random_rows.h"

namespace ladder::kernels::cpu {
namespace matmul_test {

using tensor::DType;
using namespace testing;

std::vector<Isa> supported_isas() {
    std::vector<Isa> isas;
    for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
        if (isa_supported(isa, cpu_features())) isas.push_back(isa);
    }
    return isas;
}

struct Problem {
    std::vector<uint8_t> weight_bytes;
    std::vector<float> x;  // [kMaxT, n_in]
    WeightMatrix w;
};

constexpr int64_t kMaxT = 64;

Problem make_problem(std::mt19937& rng, DType dtype, int64_t n_out, int64_t n_in) {
    Problem p;
    for (int64_t r = 0; r < n_out; ++r) {
        const auto row = random_weight_row(rng, dtype, n_in);
        p.weight_bytes.insert(p.weight_bytes.end(), row.begin(), row.end());
    }
    p.x = random_floats(rng, kMaxT * n_in);
    p.w = make_weight_matrix(dtype, p.weight_bytes.data(), n_out, n_in);
    return p;
}

std::vector<float> run(const CpuKernels& k, const Problem& p, int64_t n_rows,
                       util::ThreadPool& pool) {
    const DType act_type = tensor::vec_dot_type(p.w.dtype);
    std::vector<uint8_t> buffer(quantized_activations_bytes(act_type, n_rows, p.w.n_in));
    const QuantizedActivations x = quantize_activations(k, act_type, p.x.data(), n_rows, p.w.n_in,
                                                        buffer.data(), buffer.size());
    std::vector<float> out(static_cast<size_t>(n_rows * p.w.n_out), -1.0f);
    matmul(k, p.w, x, out.data(), pool);
    return out;
}

struct Shape {
    DType dtype;
    int64_t n_out;
    int64_t n_in;
};

const Shape kShapes[] = {{DType::Q4_1, 77, 576},
                         {DType::Q8_0, 45, 1536},
                         {DType::Q4_K, 37, 512},
                         {DType::Q6_K, 29, 768},
                         {DType::F32, 19, 40}};

TEST(Matmul, each_output_is_the_dot_of_its_rows) {
    std::mt19937 rng(4);
    util::ThreadPool pool(2);
    for (const Isa isa : supported_isas()) {
        const CpuKernels& k = cpu_kernels_for(isa);
        for (const Shape& s : kShapes) {
            SCOPED_TRACE(std::string(isa_name(isa)) + " " +
                         std::string(tensor::dtype_name(s.dtype)));
            const Problem p = make_problem(rng, s.dtype, s.n_out, s.n_in);
            const int64_t n_rows = 5;
            const auto out = run(k, p, n_rows, pool);
            const DType act_type = tensor::vec_dot_type(s.dtype);
            std::vector<uint8_t> row(bytes_of(act_type, s.n_in));
            for (int64_t t = 0; t < n_rows; ++t) {
                k.quantize_row(act_type)(p.x.data() + t * s.n_in, row.data(), s.n_in);
                for (int64_t r = 0; r < s.n_out; ++r) {
                    const float want = k.vec_dot(s.dtype)(p.w.row(r), row.data(), s.n_in);
                    ASSERT_EQ(out[t * s.n_out + r], want) << "t=" << t << " r=" << r;
                }
            }
        }
    }
}

TEST(Matmul, row_results_are_bit_identical_for_any_batch_size_and_thread_count) {
    std::mt19937 rng(5);
    util::ThreadPool one(1);
    util::ThreadPool two(2);
    for (const Isa isa : supported_isas()) {
        const CpuKernels& k = cpu_kernels_for(isa);
        for (const Shape& s : kShapes) {
            SCOPED_TRACE(std::string(isa_name(isa)) + " " +
                         std::string(tensor::dtype_name(s.dtype)));
            const Problem p = make_problem(rng, s.dtype, s.n_out, s.n_in);
            const auto single = run(k, p, 1, one);
            const auto full = run(k, p, kMaxT, two);
            for (int64_t n_rows = 2; n_rows <= kMaxT; n_rows += (n_rows < 8 ? 1 : 7)) {
                const auto batch = run(k, p, n_rows, n_rows % 2 ? one : two);
                ASSERT_EQ(std::memcmp(batch.data(), single.data(), s.n_out * sizeof(float)), 0)
                    << "row 0 changed with T=" << n_rows;
                ASSERT_EQ(std::memcmp(batch.data(), full.data(), batch.size() * sizeof(float)), 0)
                    << "rows changed between T=" << n_rows << " and T=" << kMaxT;
            }
        }
    }
}

TEST(QuantizeActivations, rows_are_back_to_back_in_the_callers_buffer) {
    std::mt19937 rng(6);
    const int64_t n_in = 512;
    const auto x = random_floats(rng, 3 * n_in);
    const size_t bytes = quantized_activations_bytes(DType::Q8_K, 3, n_in);
    EXPECT_EQ(bytes, 3 * 2 * sizeof(tensor::BlockQ8_K));
    std::vector<uint8_t> buffer(bytes);
    const auto q = quantize_activations(cpu_kernels(), DType::Q8_K, x.data(), 3, n_in,
                                        buffer.data(), buffer.size());
    EXPECT_EQ(q.row(2), buffer.data() + 2 * q.row_bytes);
    std::vector<uint8_t> want(q.row_bytes);
    cpu_kernels_for(Isa::Scalar).quantize_row(DType::Q8_K)(x.data() + 2 * n_in, want.data(), n_in);
    EXPECT_EQ(std::memcmp(q.row(2), want.data(), want.size()), 0);
}

}  // namespace matmul_test
}  // namespace ladder::kernels::cpu
