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
    float attention_scale = 0.0f;  // multiplies q . k: 1/sqrt(head_dim) unless the arch differs

    // Sliding-window attention. A local layer's token at position p sees the
    // positions p - sliding_window + 1 .. p; a global layer sees all of them.
    int32_t sliding_window = 0;        // 0: every layer is global
    int32_t global_layer_period = 0;   // every period-th layer is global; 0: all local
    float rope_freq_base_local = 10000.0f;  // RoPE of local layers, when they differ
    float rope_freq_scale_local = 1.0f;
    float final_logit_softcap = 0.0f;  // > 0: logits = cap * tanh(logits / cap)

    int32_t q_dim() const { return n_heads * head_dim; }
    int32_t kv_dim() const { return n_kv_heads * head_dim; }
    bool is_local_layer(int32_t layer) const {
        if (sliding_window <= 0) return false;
        return global_layer_period <= 0 || layer % global_layer_period != global_layer_period - 1;
    }
};

// Reads `<arch>.*` keys shared by the Llama family. Throws util::InputError
// naming the key when one is missing or out of range.
ModelConfig read_llama_family_config(const gguf::GgufFile& file, RopeStyle rope_style);

}  // namespace ladder::model
