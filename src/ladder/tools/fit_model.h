// What `ladder fit` needs to know of a model, from a preset or from a GGUF
// file's metadata and tensor table: its weight bytes and the shape of its KV
// cache, layer by layer. Knows nothing of devices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ladder/tools/model_presets.h"
#include "ladder/tools/storage_type.h"

namespace ladder::gguf {
class GgufFile;
}

namespace ladder::tools {

struct KvLayer {
    int32_t n_kv_heads = 0;    // 0: the layer keeps no KV cache (a recurrent layer)
    int32_t key_length = 0;    // elements of K per head
    int32_t value_length = 0;  // elements of V per head; 0 when V is read from K (MLA)
    bool sliding = false;      // attends only to the last sliding_window tokens
};

struct FitModel {
    std::string name;    // "Llama 3 8B"
    std::string source;  // "preset llama3-8b" or the file path
    int64_t n_params = 0;
    std::string weights_type;  // "bf16", or for a file "as stored: q4_1 97%, q8_0 3%"
    uint64_t weights_bytes = 0;
    int32_t n_heads = 0;         // query heads: tensor parallelism must divide them
    int32_t context_length = 0;  // trained context; 0 when the file does not say
    int32_t sliding_window = 0;  // 0: every layer attends to the whole context
    std::vector<KvLayer> layers;
    std::vector<std::string> notes;  // assumptions the numbers rest on
};

// Every weight stored as `weights` (norms too: they are a rounding error).
FitModel fit_model_from_preset(const ModelPreset& preset, const StorageType& weights);

// Weights are the file's tensor bytes; the KV shape comes from the generic
// keys <arch>.block_count, .attention.head_count(_kv), .attention.key_length /
// value_length (scalars or per-layer arrays), .attention.sliding_window with
// .attention.sliding_window_pattern or llama.cpp's per-architecture pattern,
// and .attention.kv_lora_rank for MLA models. Throws util::InputError naming
// the file and key when a value is missing or out of range.
FitModel fit_model_from_gguf(const gguf::GgufFile& file);

// The same model as if every weight were re-quantized to `type`.
FitModel with_weights_type(FitModel model, const StorageType& type);

// Which layers of n_layers are local (sliding-window) when one layer in
// every `period` is global, as llama.cpp's set_swa_pattern: layer i is local
// when period == 0 or i % period < period - 1 (so 1 marks none, 0 all).
std::vector<bool> sliding_layers(int32_t n_layers, int32_t period);

}  // namespace ladder::tools
