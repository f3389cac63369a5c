// Matrix products of a weight matrix with quantized activations, split over
// output rows across the thread pool: the one entry the model's linear layers call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ladder/kernels/cpu/quantize_activations.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/dtype.h"
#include "ladder/util/thread_pool.h"

namespace ladder::kernels::cpu {

// Weights [n_out, n_in] of one dtype as GGUF stores them (ne0 = n_in): row r is
// row_bytes long at data + r * row_bytes. Usually a view into the mapped file.
struct WeightMatrix {
    tensor::DType dtype = tensor::DType::F32;
    const void* data = nullptr;
    int64_t n_out = 0;
    int64_t n_in = 0;
    size_t row_bytes = 0;

    const void* row(int64_t r) const {
        return static_cast<const char*>(data) + static_cast<size_t>(r) * row_bytes;
    }
};

// A view with row_bytes computed from dtype and n_in (checked to be whole blocks).
WeightMatrix make_weight_matrix(tensor::DType dtype, const void* data, int64_t n_out, int64_t n_in);

// out [x.n_rows, w.n_out] = x [n_rows, n_in] . w^T, with x already quantized
// to tensor::vec_dot_type(w.dtype). Each output is one vec_dot of a weight row
// with an activation row, so its value depends on neither T nor the thread
// count nor the tiling (batch invariance). Output rows are split into tiles
// across the pool; a tile reads each weight row once from memory and applies
// it to every activation row while it is in cache, through the table's
// multi-row kernel (GemmFn, one unpack of each weight block for several
// activation rows) where it has one, else one vec_dot per output.
void matmul(const CpuKernels& kernels, const WeightMatrix& w, const QuantizedActivations& x,
            float* out, util::ThreadPool& pool);

// The same with cpu_kernels().
void matmul(const WeightMatrix& w, const QuantizedActivations& x, float* out,
            util::ThreadPool& pool);

// One product of a matmul_group: out [x->n_rows, w->n_out] = x . w^T.
struct MatmulTask {
    const WeightMatrix* w;
    const QuantizedActivations* x;
    float* out;
};

// Independent products (at most 8, e.g. Q, K and V of one layer) in one
// parallel region: in decode each product is a few microseconds of work, and
// one wake-up and one wait for all of them, with their tiles balanced together,
// costs less than one per product. Each output is what matmul gives.
void matmul_group(const CpuKernels& kernels, std::span<const MatmulTask> tasks,
                  util::ThreadPool& pool);
void matmul_group(std::span<const MatmulTask> tasks, util::ThreadPool& pool);

}  // namespace ladder::kernels::cpu
