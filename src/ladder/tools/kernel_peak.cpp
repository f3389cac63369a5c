#include "ladder/tools/kernel_peak.h"

#include <algorithm>
#include <limits>
#include <random>
#include <utility>

#include "ladder/gguf/gguf_file.h"
#include "ladder/kernels/cpu/matmul.h"
#include "ladder/tools/model_traffic.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

// Activation rows per product: enough for the multi-row kernels to reuse each
// unpacked weight block many times, few enough that the activations stay in
// L1/L2 beside the weights (measured: 16 to 64 rows are fastest, 512 ~10% slower).
constexpr int64_t kActivationRows = 64;
// Each matrix repeats for at least this long and this many runs; the fastest run counts.
constexpr double kMinSeconds = 0.1;
constexpr int kMinRuns = 3;
// The output matrix is measured on its first rows, as many as fit this size.
constexpr size_t kOutputSliceBytes = size_t{1} << 20;

// A matrix to measure: a tensor, or the first n_out rows of one.
struct Candidate {
    const gguf::TensorInfo* info = nullptr;
    int64_t n_out = 0;
};

// The first layer matrix of dtype of each distinct [n_out, n_in].
std::vector<Candidate> layer_matrices(const gguf::GgufFile& file, tensor::DType dtype) {
    std::vector<Candidate> out;
    for (const gguf::TensorInfo& info : file.tensors()) {
        if (info.dtype != dtype || !info.name.starts_with("blk.") || info.shape.size() != 2)
            continue;
        const bool seen = std::any_of(out.begin(), out.end(), [&](const Candidate& other) {
            return other.info->shape == info.shape;
        });
        if (!seen) out.push_back({&info, info.shape[1]});
    }
    return out;
}

Candidate output_slice(const gguf::GgufFile& file, const ModelTraffic& traffic) {
    const gguf::TensorInfo* info = file.find_tensor(traffic.output_matrix_name);
    if (!info || info->shape.size() != 2) {
        util::fail("the output matrix {} is not a matrix", traffic.output_matrix_name);
    }
    const uint64_t row_bytes = info->size_bytes / static_cast<uint64_t>(info->shape[1]);
    const auto rows = static_cast<int64_t>(kOutputSliceBytes / std::max<uint64_t>(1, row_bytes));
    return {info, std::clamp<int64_t>(rows, 1, info->shape[1])};
}

double best_matmul_seconds(const kernels::cpu::WeightMatrix& w,
                           const kernels::cpu::QuantizedActivations& x, util::ThreadPool& pool) {
    std::vector<float> out(static_cast<size_t>(x.n_rows * w.n_out));
    kernels::cpu::matmul(w, x, out.data(), pool);  // warm-up: caches, pages, thread wake-up
    double best = std::numeric_limits<double>::infinity();
    const double start = util::now_seconds();
    for (int run = 0; run < kMinRuns || util::now_seconds() - start < kMinSeconds; ++run) {
        const double run_start = util::now_seconds();
        kernels::cpu::matmul(w, x, out.data(), pool);
        best = std::min(best, util::now_seconds() - run_start);
    }
    return best;
}

// ops/s of one matrix times kActivationRows rows of unit-scale activations,
// as a normed residual stream has.
double matrix_ops_per_second(const gguf::GgufFile& file, const Candidate& matrix,
                             util::ThreadPool& pool) {
    const tensor::DType dtype = matrix.info->dtype;
    const int64_t n_in = matrix.info->shape[0];  // GGUF order: the row (input) dimension first
    const auto w = kernels::cpu::make_weight_matrix(dtype, file.tensor_data(*matrix.info).data(),
                                                    matrix.n_out, n_in);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(kActivationRows * n_in));
    for (float& v : x) v = normal(rng);
    const tensor::DType activation_type = tensor::vec_dot_type(dtype);
    std::vector<uint8_t> quantized(
        kernels::cpu::quantized_activations_bytes(activation_type, kActivationRows, n_in));
    const auto xq = kernels::cpu::quantize_activations(activation_type, x.data(), kActivationRows,
                                                       n_in, quantized.data(), quantized.size());
    const double ops = 2.0 * static_cast<double>(matrix.n_out * n_in * kActivationRows);
    return ops / best_matmul_seconds(w, xq, pool);
}

KernelPeak fastest_of(const gguf::GgufFile& file, tensor::DType dtype,
                      const std::vector<Candidate>& matrices, util::ThreadPool& pool) {
    if (!kernels::cpu::cpu_kernels().vec_dot(dtype)) {
        util::fail("the CPU kernels have no {} matrix product to measure the peak of",
                   tensor::dtype_name(dtype));
    }
    KernelPeak peak;
    peak.dtype = dtype;
    peak.n_rows = kActivationRows;
    peak.n_threads = pool.n_threads();
    for (const Candidate& matrix : matrices) {
        const double ops_per_second = matrix_ops_per_second(file, matrix, pool);
        if (ops_per_second <= peak.ops_per_second) continue;
        peak.ops_per_second = ops_per_second;
        peak.matrix_name = matrix.info->name;
        peak.n_in = matrix.info->shape[0];
        peak.n_out = matrix.n_out;
    }
    return peak;
}

}  // namespace

std::vector<KernelPeak> measure_kernel_peaks(const gguf::GgufFile& file,
                                             const ModelTraffic& traffic, util::ThreadPool& pool) {
    std::vector<std::pair<int64_t, tensor::DType>> by_share;
    for (const auto& [dtype, n_params] : traffic.layer_matmul_params_by_dtype) {
        by_share.emplace_back(n_params, dtype);
    }
    std::sort(by_share.rbegin(), by_share.rend());
    std::vector<KernelPeak> peaks;
    for (const auto& [n_params, dtype] : by_share) {
        peaks.push_back(fastest_of(file, dtype, layer_matrices(file, dtype), pool));
    }
    if (!traffic.layer_matmul_params_by_dtype.contains(traffic.output_dtype)) {
        peaks.push_back(
            fastest_of(file, traffic.output_dtype, {output_slice(file, traffic)}, pool));
    }
    return peaks;
}

}  // namespace ladder::tools
