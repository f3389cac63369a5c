// The one table of architectures ladder can run: general.architecture name to
// the function that builds that model. Each architecture lives in arch/<name>.cpp.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "ladder/model/model.h"

namespace ladder::model {

using ModelFactory = std::unique_ptr<Model> (*)(const gguf::GgufFile& file);

struct ArchEntry {
    std::string_view name;
    ModelFactory build;
};

const std::vector<ArchEntry>& architectures();

// The Llama family (llama, mistral, qwen2): one implementation, the
// differences are hyperparameters (RoPE style, QKV biases).
std::unique_ptr<Model> build_llama(const gguf::GgufFile& file);
std::unique_ptr<Model> build_qwen2(const gguf::GgufFile& file);
// Gemma 3: sandwich norms, per-head Q/K norms, local and global attention layers.
std::unique_ptr<Model> build_gemma3(const gguf::GgufFile& file);

}  // namespace ladder::model
