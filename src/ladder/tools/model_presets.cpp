// The preset table. Shapes are copied from each model's config.json on the
// Hugging Face hub (repository named per row); the parameter counts they imply
// are checked in tests against the totals the model cards publish.
#include "ladder/tools/model_presets.h"

#include <array>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// clang-format off
// name, description, layers, dim, ffn, heads, kv heads, head dim, vocab, context,
// tied, qkv bias, norms per layer, qk norm, sliding window, swa period
constexpr std::array kModelPresets = {
    // meta-llama/Meta-Llama-3-8B: 8,030,261,248 parameters.
    ModelPreset{"llama3-8b", "Llama 3 8B", 32, 4096, 14336, 32, 8, 128, 128256, 8192,
                false, false, 2, false, 0, 0},
    // meta-llama/Meta-Llama-3-70B: 70,553,706,496 parameters.
    ModelPreset{"llama3-70b", "Llama 3 70B", 80, 8192, 28672, 64, 8, 128, 128256, 8192,
                false, false, 2, false, 0, 0},
    // meta-llama/Llama-3.1-8B and -70B: the Llama 3 shapes with a 128k context.
    ModelPreset{"llama3.1-8b", "Llama 3.1 8B", 32, 4096, 14336, 32, 8, 128, 128256, 131072,
                false, false, 2, false, 0, 0},
    ModelPreset{"llama3.1-70b", "Llama 3.1 70B", 80, 8192, 28672, 64, 8, 128, 128256, 131072,
                false, false, 2, false, 0, 0},
    // meta-llama/Llama-3.1-405B: 405,853,388,800 parameters.
    ModelPreset{"llama3.1-405b", "Llama 3.1 405B", 126, 16384, 53248, 128, 8, 128, 128256,
                131072, false, false, 2, false, 0, 0},
    // meta-llama/Llama-3.2-1B and -3B: tied embeddings; 1,235,814,400 and
    // 3,212,749,824 parameters.
    ModelPreset{"llama3.2-1b", "Llama 3.2 1B", 16, 2048, 8192, 32, 8, 64, 128256, 131072,
                true, false, 2, false, 0, 0},
    ModelPreset{"llama3.2-3b", "Llama 3.2 3B", 28, 3072, 8192, 24, 8, 128, 128256, 131072,
                true, false, 2, false, 0, 0},
    // mistralai/Mistral-7B-v0.3: 7,248,023,552 parameters.
    ModelPreset{"mistral-7b", "Mistral 7B v0.3", 32, 4096, 14336, 32, 8, 128, 32768, 32768,
                false, false, 2, false, 0, 0},
    // Qwen/Qwen2.5-7B and -72B: Q/K/V biases; 7,615,616,512 and
    // 72,706,203,648 parameters. Context is the native 32k (128k with YaRN).
    ModelPreset{"qwen2.5-7b", "Qwen2.5 7B", 28, 3584, 18944, 28, 4, 128, 152064, 32768,
                false, true, 2, false, 0, 0},
    ModelPreset{"qwen2.5-72b", "Qwen2.5 72B", 80, 8192, 29568, 64, 8, 128, 152064, 32768,
                false, true, 2, false, 0, 0},
    // google/gemma-3-270m: 268,098,176 parameters (the same count as the
    // GGUF that `make model-gemma3` fetches). Five local layers of a 512-token
    // window per global layer.
    ModelPreset{"gemma3-270m", "Gemma 3 270M", 18, 640, 2048, 4, 1, 256, 262144, 32768,
                true, false, 4, true, 512, 6},
    // google/gemma-3-27b-it, text_config: the language model only (the
    // vision tower adds about 0.4 B). Window 1024, pattern 6.
    ModelPreset{"gemma3-27b", "Gemma 3 27B", 62, 5376, 21504, 32, 16, 128, 262208, 131072,
                true, false, 4, true, 1024, 6},
    // HuggingFaceTB/SmolLM2-135M-Instruct: 134,515,008 parameters, ladder's
    // default model.
    ModelPreset{"smollm2-135m", "SmolLM2 135M", 30, 576, 1536, 9, 3, 64, 49152, 8192,
                true, false, 2, false, 0, 0},
};
// clang-format on

}  // namespace

std::span<const ModelPreset> model_presets() {
    return kModelPresets;
}

std::string model_preset_names() {
    std::string out;
    for (const auto& preset : kModelPresets) {
        if (!out.empty()) out += ", ";
        out += preset.name;
    }
    return out;
}

const ModelPreset& find_model_preset(std::string_view name) {
    for (const auto& preset : kModelPresets) {
        if (preset.name == name) return preset;
    }
    util::fail("unknown model preset '{}'; valid: {}", name, model_preset_names());
}

int64_t parameter_count(const ModelPreset& p) {
    const int64_t dim = p.dim;
    const int64_t q_dim = int64_t{p.n_heads} * p.head_dim;
    const int64_t kv_dim = int64_t{p.n_kv_heads} * p.head_dim;
    int64_t attention = dim * q_dim + 2 * dim * kv_dim + q_dim * dim;
    if (p.qkv_bias) attention += q_dim + 2 * kv_dim;
    if (p.qk_norm) attention += 2 * int64_t{p.head_dim};
    const int64_t mlp = 3 * dim * p.hidden_dim;
    const int64_t per_layer = attention + mlp + int64_t{p.n_norms_per_layer} * dim;
    const int64_t embeddings = int64_t{p.vocab_size} * dim;
    return embeddings * (p.tied_embeddings ? 1 : 2) + per_layer * p.n_layers + dim;
}

}  // namespace ladder::tools
