// The default model, loaded once for every server suite that needs its
// tokenizer or an engine; null when it is not there (the suites skip).
#pragma once

#include <filesystem>
#include <memory>

#include "ladder/engine/model_bundle.h"

namespace ladder::server::testing {

inline engine::ModelBundle* shared_bundle() {
    static const std::unique_ptr<engine::ModelBundle> bundle = [] {
        const auto path =
            std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
        if (!std::filesystem::exists(path)) return std::unique_ptr<engine::ModelBundle>();
        return std::make_unique<engine::ModelBundle>(engine::load_model_bundle(path.string()));
    }();
    return bundle.get();
}

}  // namespace ladder::server::testing
