// The measured peak of the matrix kernels, the figure that bounds prefill:
// ops/s of kernels::cpu::matmul on the model's own matrices of each type it
// stores them in, small enough to stay in cache, with enough activation rows
// that arithmetic, not memory, is the limit. A multiply-add counts as 2 ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ladder/tensor/dtype.h"

namespace ladder::gguf {
class GgufFile;
}
namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct ModelTraffic;

struct KernelPeak {
    tensor::DType dtype = tensor::DType::F32;
    std::string matrix_name;  // the fastest tensor measured, "blk.0.ffn_down.weight"
    int64_t n_out = 0;        // rows measured (a slice, for the output matrix)
    int64_t n_in = 0;
    int64_t n_rows = 0;  // activation rows per product
    int n_threads = 0;
    double ops_per_second = 0;
};

// One peak per matrix type of the model, largest share of its parameters
// first. A type is measured on one layer matrix (blk.*) of each distinct
// shape, keeping the fastest (a longer row spreads each output's fixed cost
// over more blocks); a type only the output matrix has, on a cache-sized slice
// of its rows. Throws util::InputError when the CPU kernels have no product
// for a type.
std::vector<KernelPeak> measure_kernel_peaks(const gguf::GgufFile& file,
                                             const ModelTraffic& traffic, util::ThreadPool& pool);

}  // namespace ladder::tools
