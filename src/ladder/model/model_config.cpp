#include "ladder/model/model_config.h"

#include <cmath>

#include "ladder/gguf/gguf_file.h"
#include "ladder/kernels/cpu/attention.h"
#include "ladder/util/error.h"

namespace ladder::model {

namespace {

// Upper bounds that no real model reaches; they keep a hostile file from
// making us size buffers by absurd numbers.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxWidth = 1 << 20;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxHeadDim = kernels::cpu::kMaxHeadDim;

int32_t required_int(const gguf::GgufFile& file, const std::string& key, int64_t min,
                     int64_t max) {
    const auto value = file.get_int(key);
    if (!value) util::fail("{}: metadata key '{}' is missing", file.name(), key);
    if (*value < min || *value > max) {
        util::fail("{}: metadata key '{}' = {} is outside [{}, {}]", file.name(), key, *value,
                   min, max);
    }
    return static_cast<int32_t>(*value);
}

}  // namespace

ModelConfig read_llama_family_config(const gguf::GgufFile& file, RopeStyle rope_style) {
    ModelConfig config;
    config.architecture = file.get_string("general.architecture").value_or("");
    config.name = file.get_string("general.name").value_or("");
    const std::string& arch = config.architecture;

    config.n_layers = required_int(file, arch + ".block_count", 1, kMaxLayers);
    config.dim = required_int(file, arch + ".embedding_length", 1, kMaxWidth);
    config.hidden_dim = required_int(file, arch + ".feed_forward_length", 1, kMaxWidth);
    config.n_heads = required_int(file, arch + ".attention.head_count", 1, kMaxHeads);
    config.n_kv_heads = file.get_int(arch + ".attention.head_count_kv")
                            ? required_int(file, arch + ".attention.head_count_kv", 1, kMaxHeads)
                            : config.n_heads;
    if (config.n_heads % config.n_kv_heads != 0) {
        util::fail("{}: {} query heads are not a multiple of {} KV heads", file.name(),
                   config.n_heads, config.n_kv_heads);
    }
    config.head_dim = file.get_int(arch + ".attention.key_length")
                          ? required_int(file, arch + ".attention.key_length", 1, kMaxWidth)
                          : config.dim / config.n_heads;
    if (!file.get_int(arch + ".attention.key_length") && config.dim % config.n_heads != 0) {
        util::fail("{}: embedding width {} is not divisible by {} heads", file.name(),
                   config.dim, config.n_heads);
    }
    config.attention_scale = 1.0f / std::sqrt(static_cast<float>(config.head_dim));
    if (config.head_dim > kMaxHeadDim) {
        util::fail("{}: head dimension {} is above the supported {}", file.name(), config.head_dim,
                   kMaxHeadDim);
    }
    config.context_length = file.get_int(arch + ".context_length")
                                ? required_int(file, arch + ".context_length", 1, 1 << 24)
                                : 4096;
    config.rms_norm_eps = static_cast<float>(
        file.get_float(arch + ".attention.layer_norm_rms_epsilon").value_or(1e-5));
    if (!(config.rms_norm_eps > 0.0f && config.rms_norm_eps < 1.0f)) {
        util::fail("{}: RMSNorm epsilon {} is out of range", file.name(), config.rms_norm_eps);
    }

    config.rope_style = rope_style;
    config.rope_dim = file.get_int(arch + ".rope.dimension_count")
                          ? required_int(file, arch + ".rope.dimension_count", 2, config.head_dim)
                          : config.head_dim;
    if (config.rope_dim % 2 != 0) util::fail("{}: RoPE dimension count must be even", file.name());
    config.rope_freq_base =
        static_cast<float>(file.get_float(arch + ".rope.freq_base").value_or(10000.0));
    if (!(config.rope_freq_base > 1.0f)) {
        util::fail("{}: RoPE frequency base {} must be > 1", file.name(), config.rope_freq_base);
    }
    const std::string scaling = file.get_string(arch + ".rope.scaling.type").value_or("none");
    if (scaling == "linear") {
        const double factor = file.get_float(arch + ".rope.scaling.factor").value_or(1.0);
        if (!(factor >= 1.0)) util::fail("{}: RoPE scaling factor must be >= 1", file.name());
        config.rope_freq_scale = static_cast<float>(1.0 / factor);
    } else if (scaling != "none") {
        util::fail("{}: RoPE scaling type '{}' is not supported (only linear)", file.name(),
                   scaling);
    }

    const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
    const gguf::Array* token_array = tokens ? tokens->as_array() : nullptr;
    const int64_t n_vocab_tokens =
        token_array ? static_cast<int64_t>(token_array->elements.size()) : 0;
    config.vocab_size = file.get_int(arch + ".vocab_size")
                            ? required_int(file, arch + ".vocab_size", 1, kMaxVocab)
                            : static_cast<int32_t>(n_vocab_tokens);
    if (config.vocab_size <= 0 || config.vocab_size > kMaxVocab) {
        util::fail("{}: vocabulary size is missing or out of range", file.name());
    }
    config.tied_embeddings = file.find_tensor("output.weight") == nullptr;
    return config;
}

}  // namespace ladder::model
