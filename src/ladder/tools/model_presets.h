// Known model shapes for `ladder fit --preset`: the numbers a config.json
// gives (layers, widths, heads), kept as data, and the parameter count they
// imply. Knows nothing of devices or dtypes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ladder::tools {

struct ModelPreset {
    std::string_view name;         // what --preset takes: "llama3-8b"
    std::string_view description;  // "Llama 3 8B"
    int32_t n_layers;
    int32_t dim;         // hidden_size
    int32_t hidden_dim;  // intermediate_size (gated MLP: gate, up, down)
    int32_t n_heads;
    int32_t n_kv_heads;
    int32_t head_dim;
    int32_t vocab_size;
    int32_t context_length;     // trained context (max_position_embeddings)
    bool tied_embeddings;       // output matrix shares token_embd
    bool qkv_bias;              // Qwen2: biases on Q, K and V
    int32_t n_norms_per_layer;  // RMSNorm weight vectors of width dim per layer
    bool qk_norm;               // per-head RMSNorm on Q and K (Gemma 3)
    int32_t sliding_window;     // tokens a local layer attends to; 0: none
    int32_t swa_period;         // layer i is local when i % period < period - 1
};

std::span<const ModelPreset> model_presets();
// Throws util::InputError listing the preset names when name is unknown.
const ModelPreset& find_model_preset(std::string_view name);
// "llama3-8b, llama3-70b, ...".
std::string model_preset_names();

// Parameters of the dense decoder the preset describes: embeddings, per layer
// Q/K/V/O projections (with biases and Q/K norms where the model has them),
// the gated MLP and the norms, the final norm, and an untied output matrix.
int64_t parameter_count(const ModelPreset& preset);

}  // namespace ladder::tools
