#include "ladder/model/forward_scratch.h"

#include <algorithm>

#include "ladder/util/check.h"

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
    const size_t quantized_bytes =
        kernels::cpu::quantized_activations_bytes(tensor::DType::F32, n_rows, widest_input);
    for (auto& buffer : quantized) buffer.resize(quantized_bytes);
    capacity_rows = n_rows;
}

void ForwardScratch::project(std::initializer_list<Projection> projections, const float* x_rows,
                             int64_t n_rows, util::ThreadPool& pool) {
    constexpr size_t kMaxProjections = 4;
    LADDER_CHECK(projections.size() <= kMaxProjections, "too many projections in one call");
    kernels::cpu::QuantizedActivations inputs[kMaxActivationTypes];
    size_t n_inputs = 0;
    kernels::cpu::MatmulTask tasks[kMaxProjections];
    size_t n_tasks = 0;
    for (const Projection& projection : projections) {
        const kernels::cpu::WeightMatrix& w = *projection.w;
        const tensor::DType type = tensor::vec_dot_type(w.dtype);
        size_t i = 0;
        while (i < n_inputs && !(inputs[i].dtype == type && inputs[i].n_in == w.n_in)) ++i;
        if (i == n_inputs) {
            LADDER_CHECK(n_inputs < kMaxActivationTypes, "too many activation types in one call");
            std::vector<uint8_t>& buffer = quantized[n_inputs];
            inputs[n_inputs++] = kernels::cpu::quantize_activations(type, x_rows, n_rows, w.n_in,
                                                                    buffer.data(), buffer.size());
        }
        tasks[n_tasks++] = {&w, &inputs[i], projection.out};
    }
    kernels::cpu::matmul_group(std::span(tasks, n_tasks), pool);
}

}  // namespace ladder::model
