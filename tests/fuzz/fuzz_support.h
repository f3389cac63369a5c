// What the fuzz targets share: the models they run on, loaded once per
// process (the first input pays). A property a target checks on fuzzed input
// uses LADDER_CHECK: when it fails, the input is a bug, and the abort makes
// libFuzzer keep it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "ladder/engine/model_bundle.h"
#include "ladder/engine/tokenizer_loader.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::fuzz {

inline std::string model_path(const char* file_name) {
    const char* root = std::getenv("LADDER_SOURCE_DIR");
    return (std::filesystem::path(root != nullptr ? root : LADDER_SOURCE_DIR) / "models" /
            file_name)
        .string();
}

// The models' files must be there (`make model model-gemma3`): a target
// that silently fuzzed nothing would pass for the wrong reason.
inline std::string require_model(const char* file_name) {
    std::string path = model_path(file_name);
    if (!std::filesystem::exists(path)) {
        std::fprintf(stderr, "fuzz: %s is missing: run `make model model-gemma3`\n", path.c_str());
        std::abort();
    }
    return path;
}

inline constexpr const char* kSmolLm2 = "SmolLM2-135M-Instruct.Q4_1.gguf";
inline constexpr const char* kGemma3 = "gemma-3-270m-q4_k_m.gguf";

// The tokenizer of a model file, read once (the vocabulary only).
inline std::unique_ptr<tokenizer::Tokenizer> load_tokenizer_of(const char* file_name) {
    const auto file = gguf::GgufFile::open(require_model(file_name));
    return engine::load_tokenizer(*file);
}

// SmolLM2's byte-level BPE tokenizer, or Gemma 3's SentencePiece one, each
// loaded on first use and kept for the process.
inline const tokenizer::Tokenizer& tokenizer_of_model(bool gemma) {
    static const auto smollm2 = load_tokenizer_of(kSmolLm2);
    static const auto gemma3 = load_tokenizer_of(kGemma3);
    return gemma ? *gemma3 : *smollm2;
}

// Strictly valid UTF-8 (no overlongs, surrogates or cut sequences).
inline bool valid_utf8(std::string_view text) { return tokenizer::utf8::sanitize(text) == text; }

}  // namespace ladder::fuzz
