// Tiled matrix-vector and matrix-matrix products over the kernel table.
#include "ladder/kernels/cpu/matmul.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

namespace {

// Activation rows per pass over a tile: 64 rows of a 1536-wide Q8 activation
// are ~100 KiB, which stays in L2 while a tile's weight rows stream past.
constexpr int64_t kActivationRowsPerPass = 64;

// Output rows per task: enough tasks (8 per thread) for dynamic balancing,
// few enough that the per-task handoff stays negligible beside the work.
int64_t rows_per_tile(int64_t n_out, int n_threads) {
    const int64_t target_tasks = static_cast<int64_t>(n_threads) * 8;
    return std::clamp<int64_t>(n_out / target_tasks, 4, 256);
}

}  // namespace

WeightMatrix make_weight_matrix(tensor::DType dtype, const void* data, int64_t n_out,
                                int64_t n_in) {
    const auto row_bytes = tensor::row_bytes(dtype, n_in);
    LADDER_CHECK(row_bytes.has_value(), "weight row is not a whole number of blocks");
    return WeightMatrix{dtype, data, n_out, n_in, static_cast<size_t>(*row_bytes)};
}

void matmul(const CpuKernels& kernels, const WeightMatrix& w, const QuantizedActivations& x,
            float* out, util::ThreadPool& pool) {
    LADDER_CHECK(x.dtype == tensor::vec_dot_type(w.dtype), "activations not in vec_dot_type");
    LADDER_CHECK(x.n_in == w.n_in, "activation and weight widths differ");
    const VecDotFn dot = kernels.vec_dot(w.dtype);
    LADDER_CHECK(dot != nullptr, "no dot product kernel for this weight dtype");
    const int64_t n_out = w.n_out;
    const int64_t n_in = w.n_in;
    const int64_t n_rows = x.n_rows;
    if (n_out == 0 || n_rows == 0) return;

    const int64_t tile = rows_per_tile(n_out, pool.n_threads());
    const int64_t n_tiles = (n_out + tile - 1) / tile;
    const GemmFn gemm = kernels.gemm(w.dtype);
    pool.parallel_for(n_tiles, [&](int64_t tile_index) {
        const int64_t r_begin = tile_index * tile;
        const int64_t r_end = std::min(n_out, r_begin + tile);
        for (int64_t t0 = 0; t0 < n_rows; t0 += kActivationRowsPerPass) {
            const int64_t t1 = std::min(n_rows, t0 + kActivationRowsPerPass);
            if (gemm != nullptr) {
                // Unpacks each weight block once for several activation rows;
                // every output still equals dot() bit for bit (vec_dot.h).
                gemm(w.row(r_begin), w.row_bytes, r_end - r_begin, x.row(t0), x.row_bytes,
                     t1 - t0, n_in, out + t0 * n_out + r_begin, n_out);
                continue;
            }
            for (int64_t r = r_begin; r < r_end; ++r) {
                const void* weight_row = w.row(r);
                for (int64_t t = t0; t < t1; ++t)
                    out[t * n_out + r] = dot(weight_row, x.row(t), n_in);
            }
        }
    });
}

void matmul(const WeightMatrix& w, const QuantizedActivations& x, float* out,
            util::ThreadPool& pool) {
    matmul(cpu_kernels(), w, x, out, pool);
}

}  // namespace ladder::kernels::cpu
