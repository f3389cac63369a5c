#include "ladder/model/forward_scratch.h"

#include <algorithm>

namespace ladder::model {

void ForwardScratch::ensure(const ModelConfig& config, int64_t n_rows) {
    if (n_rows <= capacity_rows) return;
    const auto rows = static_cast<size_t>(n_rows);
    x.resize(rows * config.dim);
    xb.resize(rows * config.dim);
    q.resize(rows * config.q_dim());
    k.resize(rows * config.kv_dim());
    v.resize(rows * config.kv_dim());
    attn.resize(rows * config.q_dim());
    gate.resize(rows * config.hidden_dim);
    up.resize(rows * config.hidden_dim);
    out.resize(rows * config.dim);
    const int64_t widest_input = std::max<int64_t>({config.dim, config.hidden_dim, config.q_dim()});
    // F32 is the widest activation type any weight type pairs with.
    quantized.resize(
        kernels::cpu::quantized_activations_bytes(tensor::DType::F32, n_rows, widest_input));
    capacity_rows = n_rows;
}

kernels::cpu::QuantizedActivations ForwardScratch::quantize_for(
    const kernels::cpu::WeightMatrix& w, const float* x_rows, int64_t n_rows,
    const kernels::cpu::QuantizedActivations* current) {
    const tensor::DType type = tensor::vec_dot_type(w.dtype);
    if (current != nullptr && current->dtype == type) return *current;
    return kernels::cpu::quantize_activations(type, x_rows, n_rows, w.n_in, quantized.data(),
                                              quantized.size());
}

}  // namespace ladder::model
