// Hyperparameters of a model, read once from GGUF metadata and validated;
// immutable afterwards. Architectures differ here, not in `if (arch == ...)`.
#pragma once

#include <cstdint>
#include <string>

namespace ladder::gguf {
class GgufFile;
}

namespace ladder::model {

// How RoPE pairs the dimensions of a head: Normal rotates (x[2i], x[2i+1])
// (Llama: its Q/K are stored permuted for this), NeoX rotates (x[i], x[i+d/2]).
enum class RopeStyle { Normal, NeoX };

struct ModelConfig {
    std::string architecture;
    std::string name;
    int32_t n_layers = 0;
    int32_t dim = 0;         // embedding width
    int32_t hidden_dim = 0;  // feed-forward width
    int32_t n_heads = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;
    int32_t vocab_size = 0;
    int32_t context_length = 0;  // trained context
    float rms_norm_eps = 1e-5f;
    RopeStyle rope_style = RopeStyle::Normal;
    int32_t rope_dim = 0;        // dimensions of a head that RoPE rotates
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;  // linear scaling: positions are multiplied by this
    bool tied_embeddings = false;  // output matrix is token_embd

    int32_t q_dim() const { return n_heads * head_dim; }
    int32_t kv_dim() const { return n_kv_heads * head_dim; }
};

// Reads `<arch>.*` keys shared by the Llama family. Throws util::InputError
// naming the key when one is missing or out of range.
ModelConfig read_llama_family_config(const gguf::GgufFile& file, RopeStyle rope_style);

}  // namespace ladder::model
