// Builds a FitModel from a preset or from a GGUF file. The file is read through
// generic `<arch>.*` keys, not per-architecture code, so any decoder llama.cpp
// can load gets a KV estimate; the one table below is the sliding-window
// pattern that llama.cpp hard-codes per architecture.
#include "ladder/tools/fit_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include "ladder/gguf/gguf_file.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// Bounds no real model reaches; they keep a hostile file's numbers sane.
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeads = 1 << 16;
constexpr int64_t kMaxLength = 1 << 20;

// One global layer per `period` for architectures whose GGUF files carry the
// window but not the pattern (llama.cpp's set_swa_pattern in each loader).
struct SwaDefault {
    std::string_view architecture;
    int32_t period;
};
constexpr std::array kSwaDefaults = {
    SwaDefault{"gemma2", 2},  SwaDefault{"gemma3", 6},  SwaDefault{"gemma-embedding", 6},
    SwaDefault{"cohere2", 4}, SwaDefault{"gpt-oss", 2},
};

class MetadataReader {
public:
    MetadataReader(const gguf::GgufFile& file, std::string arch)
        : file_(file), arch_(std::move(arch)) {}

    std::string key(std::string_view suffix) const { return fmt::format("{}.{}", arch_, suffix); }

    bool has(std::string_view suffix) const { return file_.find(key(suffix)) != nullptr; }

    int64_t checked(std::string_view suffix, int64_t value, int64_t min, int64_t max) const {
        if (value < min || value > max) {
            util::fail("{}: metadata key '{}' = {} is outside [{}, {}]", file_.name(), key(suffix),
                       value, min, max);
        }
        return value;
    }

    int64_t required_int(std::string_view suffix, int64_t min, int64_t max) const {
        const auto value = file_.get_int(key(suffix));
        if (!value) util::fail("{}: metadata key '{}' is missing", file_.name(), key(suffix));
        return checked(suffix, *value, min, max);
    }

    // A value given once for all layers or as an array of one per layer
    // (head_count_kv of models whose layers differ); fallback when absent.
    std::vector<int32_t> per_layer(std::string_view suffix, size_t n_layers, int64_t min,
                                   int64_t max, const std::vector<int32_t>& fallback) const {
        const gguf::Value* value = file_.find(key(suffix));
        if (value == nullptr) return fallback;
        if (value->as_array() == nullptr) {
            const auto scalar = file_.get_int(key(suffix));
            if (!scalar)
                util::fail("{}: metadata key '{}' is not an integer", file_.name(), key(suffix));
            return std::vector<int32_t>(n_layers,
                                        static_cast<int32_t>(checked(suffix, *scalar, min, max)));
        }
        const auto values = file_.get_int_array(key(suffix));
        if (!values || values->size() != n_layers) {
            util::fail("{}: metadata key '{}' must hold one integer per layer ({})", file_.name(),
                       key(suffix), n_layers);
        }
        std::vector<int32_t> out;
        for (const int64_t v : *values)
            out.push_back(static_cast<int32_t>(checked(suffix, v, min, max)));
        return out;
    }

private:
    const gguf::GgufFile& file_;
    std::string arch_;
};

// Which layers are local: the file's own pattern (a period, or one flag per
// layer) or the architecture's known one. Empty when the model has a window
// but ladder cannot tell which layers use it.
std::vector<bool> read_sliding_layers(const gguf::GgufFile& file, const MetadataReader& meta,
                                      const std::string& arch, size_t n_layers) {
    const std::string pattern_key = meta.key("attention.sliding_window_pattern");
    if (const gguf::Value* pattern = file.find(pattern_key)) {
        if (const gguf::Array* flags = pattern->as_array()) {
            if (flags->elements.size() != n_layers) {
                util::fail("{}: metadata key '{}' must hold one flag per layer ({})", file.name(),
                           pattern_key, n_layers);
            }
            std::vector<bool> out;
            for (const auto& flag : flags->elements) {
                const auto local = flag.as_bool();
                if (!local)
                    util::fail("{}: metadata key '{}' must hold booleans", file.name(),
                               pattern_key);
                out.push_back(*local);
            }
            return out;
        }
        const auto period = meta.required_int("attention.sliding_window_pattern", 0, kMaxLayers);
        return sliding_layers(static_cast<int32_t>(n_layers), static_cast<int32_t>(period));
    }
    for (const auto& known : kSwaDefaults) {
        if (known.architecture == arch) {
            return sliding_layers(static_cast<int32_t>(n_layers), known.period);
        }
    }
    return {};
}

// "as stored: q8_0 54%, q4_k 31%, q6_k 14%": the file's types by share of
// its bytes, largest first, at most three.
std::string stored_types(const gguf::GgufFile& file) {
    std::map<tensor::DType, uint64_t> bytes_by_type;
    uint64_t total = 0;
    for (const auto& info : file.tensors()) {
        bytes_by_type[info.dtype] += info.size_bytes;
        total += info.size_bytes;
    }
    std::vector<std::pair<uint64_t, tensor::DType>> shares;
    for (const auto& [dtype, bytes] : bytes_by_type) shares.emplace_back(bytes, dtype);
    std::sort(shares.rbegin(), shares.rend());
    std::string out = "as stored:";
    for (size_t i = 0; i < shares.size() && i < 3; ++i) {
        out += fmt::format("{} {} {:.0f}%", i == 0 ? "" : ",", storage_type(shares[i].second).name,
                           100.0 * static_cast<double>(shares[i].first) /
                               static_cast<double>(std::max<uint64_t>(total, 1)));
    }
    return out;
}

// MLA (DeepSeek V2/V3): llama.cpp caches one compressed latent of
// kv_lora_rank plus the RoPE dimensions per token and layer, not per-head K
// and V.
void apply_mla(const MetadataReader& meta, FitModel& model) {
    if (!meta.has("attention.kv_lora_rank")) return;
    const int64_t rank = meta.required_int("attention.kv_lora_rank", 1, kMaxLength);
    const int64_t rope = meta.has("rope.dimension_count")
                             ? meta.required_int("rope.dimension_count", 0, kMaxLength)
                             : 0;
    for (auto& layer : model.layers) {
        layer = KvLayer{1, static_cast<int32_t>(rank + rope), 0, false};
    }
    model.notes.push_back("MLA: the cache holds the compressed latent (kv_lora_rank + RoPE dims)");
}

void apply_sliding_window(const gguf::GgufFile& file, const MetadataReader& meta,
                          const std::string& arch, FitModel& model) {
    const int64_t window = meta.has("attention.sliding_window")
                               ? meta.required_int("attention.sliding_window", 0, int64_t{1} << 30)
                               : 0;
    if (window == 0) return;
    const std::vector<bool> local = read_sliding_layers(file, meta, arch, model.layers.size());
    if (local.empty()) {
        model.notes.push_back(fmt::format(
            "the file names a {}-token sliding window but not which layers use it; every "
            "layer is counted at full context (an upper bound)",
            window));
        return;
    }
    model.sliding_window = static_cast<int32_t>(window);
    for (size_t i = 0; i < model.layers.size(); ++i) model.layers[i].sliding = local[i];
}

}  // namespace

std::vector<bool> sliding_layers(int32_t n_layers, int32_t period) {
    std::vector<bool> out(static_cast<size_t>(std::max(n_layers, 0)));
    for (int32_t i = 0; i < n_layers; ++i) {
        out[static_cast<size_t>(i)] = period == 0 || i % period < period - 1;
    }
    return out;
}

FitModel fit_model_from_preset(const ModelPreset& preset, const StorageType& weights) {
    FitModel model;
    model.name = std::string(preset.description);
    model.source = fmt::format("preset {}", preset.name);
    model.n_params = parameter_count(preset);
    model.n_heads = preset.n_heads;
    model.context_length = preset.context_length;
    model.sliding_window = preset.sliding_window;
    const std::vector<bool> local = preset.sliding_window > 0
                                        ? sliding_layers(preset.n_layers, preset.swa_period)
                                        : std::vector<bool>(static_cast<size_t>(preset.n_layers));
    for (int32_t i = 0; i < preset.n_layers; ++i) {
        model.layers.push_back(KvLayer{preset.n_kv_heads, preset.head_dim, preset.head_dim,
                                       local[static_cast<size_t>(i)]});
    }
    model.notes.push_back(fmt::format(
        "every weight counted at {}; a real file mixes types a little (-m FILE counts its bytes)",
        weights.name));
    return with_weights_type(std::move(model), weights);
}

FitModel fit_model_from_gguf(const gguf::GgufFile& file) {
    const auto arch = file.get_string("general.architecture");
    if (!arch || arch->empty()) {
        util::fail("{}: metadata key 'general.architecture' is missing", file.name());
    }
    const MetadataReader meta(file, *arch);
    FitModel model;
    model.name = file.get_string("general.name").value_or(*arch);
    model.source = file.name();
    for (const auto& info : file.tensors()) {
        model.n_params += info.n_elements;
        model.weights_bytes += info.size_bytes;
    }
    model.weights_type = stored_types(file);

    const auto n_layers = static_cast<size_t>(meta.required_int("block_count", 1, kMaxLayers));
    const int64_t dim = meta.required_int("embedding_length", 1, kMaxLength);
    const std::vector<int32_t> heads =
        meta.per_layer("attention.head_count", n_layers, 1, kMaxHeads, {});
    if (heads.empty()) {
        util::fail("{}: metadata key '{}' is missing", file.name(),
                   meta.key("attention.head_count"));
    }
    const std::vector<int32_t> kv_heads =
        meta.per_layer("attention.head_count_kv", n_layers, 0, kMaxHeads, heads);
    model.n_heads = *std::max_element(heads.begin(), heads.end());
    const int64_t default_length = dim / heads[0];
    const auto key_length = static_cast<int32_t>(
        meta.has("attention.key_length") ? meta.required_int("attention.key_length", 1, kMaxLength)
                                         : default_length);
    const auto value_length =
        static_cast<int32_t>(meta.has("attention.value_length")
                                 ? meta.required_int("attention.value_length", 1, kMaxLength)
                                 : default_length);
    model.context_length =
        meta.has("context_length")
            ? static_cast<int32_t>(meta.required_int("context_length", 1, int64_t{1} << 30))
            : 0;

    for (size_t i = 0; i < n_layers; ++i) {
        model.layers.push_back(KvLayer{kv_heads[i], key_length, value_length, false});
    }
    apply_mla(meta, model);
    apply_sliding_window(file, meta, *arch, model);
    return model;
}

FitModel with_weights_type(FitModel model, const StorageType& type) {
    model.weights_type = type.name;
    model.weights_bytes = type.bytes_for(static_cast<uint64_t>(model.n_params));
    return model;
}

}  // namespace ladder::tools
