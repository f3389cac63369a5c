// The activations of one forward step, shared by every architecture: grown to
// the largest batch seen and then reused, so steady-state decoding does not
// allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "ladder/kernels/cpu/matmul.h"
#include "ladder/model/model_config.h"

namespace ladder::model {

struct ForwardScratch {
    int64_t capacity_rows = 0;
    std::vector<float> x;     // [T, dim] residual stream
    std::vector<float> xb;    // [T, dim] normed input of a block
    std::vector<float> q;     // [T, q_dim]
    std::vector<float> k;     // [T, kv_dim]
    std::vector<float> v;     // [T, kv_dim]
    std::vector<float> attn;  // [T, q_dim] attention output
    std::vector<float> gate;  // [T, hidden_dim]
    std::vector<float> up;    // [T, hidden_dim]
    std::vector<float> out;   // [T, dim] projection output before the residual add
    std::vector<uint8_t> quantized;     // activations quantized for the integer dot products
    std::vector<float> scores;          // [chunks, longest context] attention score rows
    std::vector<int32_t> row_sequence;  // [T] which sequence each row belongs to

    // Makes room for n_rows rows of every buffer (scores grow on demand).
    void ensure(const ModelConfig& config, int64_t n_rows);

    // x [n_rows, w.n_in] quantized for w's vec_dot type into `quantized`,
    // unless `current` already holds x in that type (Q, K and V share one).
    kernels::cpu::QuantizedActivations quantize_for(
        const kernels::cpu::WeightMatrix& w, const float* x, int64_t n_rows,
        const kernels::cpu::QuantizedActivations* current);
};

}  // namespace ladder::model
