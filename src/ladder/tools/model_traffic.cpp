#include "ladder/tools/model_traffic.h"

#include <algorithm>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr const char* kTokenEmbedding = "token_embd.weight";
constexpr const char* kOutput = "output.weight";

// A weight matrix multiplies activations; 1-D tensors (norms, biases) only scale them.
bool is_matrix(const gguf::TensorInfo& info) { return info.shape.size() >= 2 && info.shape[1] > 1; }

bool is_layer_tensor(const gguf::TensorInfo& info) { return info.name.starts_with("blk."); }

}  // namespace

double ModelTraffic::prefill_ops_per_token(int64_t n_prompt) const {
    const double output_share =
        n_prompt > 0 ? static_cast<double>(output_matmul_params) / static_cast<double>(n_prompt)
                     : 0.0;
    return 2.0 * (static_cast<double>(layer_matmul_params) + output_share);
}

ModelTraffic model_traffic(std::span<const gguf::TensorInfo> tensors) {
    const auto has = [&](const char* name) {
        return std::any_of(tensors.begin(), tensors.end(),
                           [&](const gguf::TensorInfo& info) { return info.name == name; });
    };
    const bool separate_output = has(kOutput);
    if (!separate_output && !has(kTokenEmbedding)) {
        util::fail("the model has neither {} nor {}: no output matrix", kOutput, kTokenEmbedding);
    }
    const char* output_name = separate_output ? kOutput : kTokenEmbedding;

    ModelTraffic traffic;
    traffic.output_matrix_name = output_name;
    std::map<tensor::DType, int64_t>& layer_params_by_dtype = traffic.layer_matmul_params_by_dtype;
    for (const gguf::TensorInfo& info : tensors) {
        traffic.model_bytes += info.size_bytes;
        traffic.n_params += info.n_elements;
        const bool embedding_rows_only = separate_output && info.name == kTokenEmbedding;
        if (!embedding_rows_only) traffic.decode_bytes_per_token += info.size_bytes;
        if (info.name == output_name) {
            traffic.output_matmul_params += info.n_elements;
            traffic.output_dtype = info.dtype;
        } else if (is_layer_tensor(info) && is_matrix(info)) {
            traffic.layer_matmul_params += info.n_elements;
            layer_params_by_dtype[info.dtype] += info.n_elements;
        }
    }
    if (layer_params_by_dtype.empty()) util::fail("the model has no layer weight matrices (blk.*)");
    traffic.dominant_matmul_dtype =
        std::max_element(layer_params_by_dtype.begin(), layer_params_by_dtype.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; })
            ->first;
    return traffic;
}

}  // namespace ladder::tools
