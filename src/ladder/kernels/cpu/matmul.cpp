// Tiled matrix-vector and matrix-matrix products over the kernel table.
#include "ladder/kernels/cpu/matmul.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

namespace {

// Activation rows per pass over a tile: 64 rows of a 1536-wide Q8 activation
// are ~100 KiB, which stays in L2 while a tile's weight rows stream past.
constexpr int64_t kActivationRowsPerPass = 64;

// Output rows per task: enough tasks for dynamic balancing (8 per thread),
// few enough that the per-task handoff stays negligible beside the work; a
// multiple of the widest kernel row group (the AVX-512 decode kernel takes 8
// rows at once), so no tile ends in a short group that repeats rows. Decode
// (one activation row, or the few of a step's drafted tokens) takes 2 per
// thread: its tiles are microseconds long, and every claim is a cache line
// passed between cores (tg128 ~10% faster).
int64_t rows_per_tile(int64_t n_out, int n_threads, int64_t n_rows) {
    constexpr int64_t kRowGroup = 8;
    constexpr int64_t kFewRows = 8;
    const int64_t tasks_per_thread = n_rows <= kFewRows ? 2 : 8;
    const int64_t target_tasks = static_cast<int64_t>(n_threads) * tasks_per_thread;
    const int64_t rows = std::clamp<int64_t>(n_out / target_tasks, kRowGroup, 256);
    return (rows + kRowGroup - 1) / kRowGroup * kRowGroup;
}

// Output rows [r_begin, r_end) of w . x^T for every activation row.
void run_tile(VecDotFn dot, GemmFn gemm, const WeightMatrix& w, const QuantizedActivations& x,
              int64_t r_begin, int64_t r_end, float* out) {
    const int64_t n_out = w.n_out;
    for (int64_t t0 = 0; t0 < x.n_rows; t0 += kActivationRowsPerPass) {
        const int64_t t1 = std::min(x.n_rows, t0 + kActivationRowsPerPass);
        if (gemm != nullptr) {
            // Unpacks each weight block once for several activation rows;
            // every output still equals dot() bit for bit (vec_dot.h).
            gemm(w.row(r_begin), w.row_bytes, r_end - r_begin, x.row(t0), x.row_bytes, t1 - t0,
                 w.n_in, out + t0 * n_out + r_begin, n_out);
            continue;
        }
        for (int64_t r = r_begin; r < r_end; ++r) {
            const void* weight_row = w.row(r);
            for (int64_t t = t0; t < t1; ++t)
                out[t * n_out + r] = dot(weight_row, x.row(t), w.n_in);
        }
    }
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
    const MatmulTask task{&w, &x, out};
    matmul_group(kernels, std::span(&task, 1), pool);
}

void matmul_group(const CpuKernels& kernels, std::span<const MatmulTask> tasks,
                  util::ThreadPool& pool) {
    // Every task's output rows cut into tiles, all tiles in one region.
    struct ProductTiles {
        const MatmulTask* task;
        VecDotFn dot;
        GemmFn gemm;
        int64_t tile_rows;
        int64_t first_tile;
    };
    constexpr size_t kMaxTasks = 8;
    LADDER_CHECK(tasks.size() <= kMaxTasks, "too many products for one matmul_group");
    ProductTiles products[kMaxTasks];
    int64_t n_tiles = 0;
    size_t n_live = 0;
    for (const MatmulTask& task : tasks) {
        const WeightMatrix& w = *task.w;
        const QuantizedActivations& x = *task.x;
        LADDER_CHECK(x.dtype == tensor::vec_dot_type(w.dtype), "activations not in vec_dot_type");
        LADDER_CHECK(x.n_in == w.n_in, "activation and weight widths differ");
        const VecDotFn dot = kernels.vec_dot(w.dtype);
        LADDER_CHECK(dot != nullptr, "no dot product kernel for this weight dtype");
        if (w.n_out == 0 || x.n_rows == 0) continue;
        const int64_t tile_rows = rows_per_tile(w.n_out, pool.n_threads(), x.n_rows);
        products[n_live++] = {&task, dot, kernels.gemm(w.dtype), tile_rows, n_tiles};
        n_tiles += (w.n_out + tile_rows - 1) / tile_rows;
    }
    pool.parallel_for(n_tiles, [&](int64_t tile_index) {
        size_t p = 0;
        while (p + 1 < n_live && products[p + 1].first_tile <= tile_index) ++p;
        const ProductTiles& product = products[p];
        const WeightMatrix& w = *product.task->w;
        const int64_t r_begin = (tile_index - product.first_tile) * product.tile_rows;
        const int64_t r_end = std::min(w.n_out, r_begin + product.tile_rows);
        run_tile(product.dot, product.gemm, w, *product.task->x, r_begin, r_end, product.task->out);
    });
}

void matmul(const WeightMatrix& w, const QuantizedActivations& x, float* out,
            util::ThreadPool& pool) {
    matmul(cpu_kernels(), w, x, out, pool);
}

void matmul_group(std::span<const MatmulTask> tasks, util::ThreadPool& pool) {
    matmul_group(cpu_kernels(), tasks, pool);
}

}  // namespace ladder::kernels::cpu
