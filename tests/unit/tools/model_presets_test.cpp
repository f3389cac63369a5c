// Presets: the parameter count implied by each config.json shape must equal
// the total the model's card publishes, so the shapes are the real ones.
#include "ladder/tools/model_presets.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ladder/gguf/gguf_file.h"
#include "ladder/tools/fit.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

TEST(ModelPresets, parameter_counts_match_published_totals) {
    // Totals from the Hugging Face model pages (safetensors parameter counts).
    const std::pair<const char*, int64_t> published[] = {
        {"llama3-8b", 8'030'261'248},       {"llama3-70b", 70'553'706'496},
        {"llama3.1-8b", 8'030'261'248},     {"llama3.1-70b", 70'553'706'496},
        {"llama3.1-405b", 405'853'388'800}, {"llama3.2-1b", 1'235'814'400},
        {"llama3.2-3b", 3'212'749'824},     {"mistral-7b", 7'248'023'552},
        {"qwen2.5-7b", 7'615'616'512},      {"qwen2.5-72b", 72'706'203'648},
        {"gemma3-270m", 268'098'176},       {"smollm2-135m", 134'515'008},
    };
    for (const auto& [name, n_params] : published) {
        EXPECT_EQ(parameter_count(find_model_preset(name)), n_params) << name;
    }
    // Gemma 3 27B's language model: about 27.0 B of its 27.4 B (vision aside).
    const int64_t gemma27 = parameter_count(find_model_preset("gemma3-27b"));
    EXPECT_GT(gemma27, 26'800'000'000);
    EXPECT_LT(gemma27, 27'200'000'000);
}

TEST(ModelPresets, every_preset_is_a_valid_shape) {
    for (const auto& preset : model_presets()) {
        EXPECT_GT(preset.n_layers, 0) << preset.name;
        EXPECT_EQ(preset.n_heads % preset.n_kv_heads, 0) << preset.name;
        EXPECT_GT(preset.context_length, 0) << preset.name;
        EXPECT_EQ(preset.sliding_window > 0, preset.swa_period > 0) << preset.name;
        EXPECT_NO_THROW(find_model_preset(preset.name));
    }
}

TEST(ModelPresets, unknown_preset_lists_the_valid_ones) {
    try {
        find_model_preset("llama9-1t");
        FAIL() << "unknown preset accepted";
    } catch (const util::InputError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("llama9-1t"), std::string::npos) << message;
        EXPECT_NE(message.find("llama3-70b"), std::string::npos) << message;
        EXPECT_NE(message.find("qwen2.5-7b"), std::string::npos) << message;
    }
}

// The preset and the real file must describe the same model: same parameter
// count and, at any context, the same KV cache (which checks the sliding
// pattern against the file's metadata).
TEST(ModelPresets, gemma3_270m_preset_matches_its_gguf_file) {
    const auto path =
        std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "gemma-3-270m-q4_k_m.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "run `make model-gemma3`";
    const auto file = gguf::GgufFile::open(path.string());
    const FitModel from_file = fit_model_from_gguf(*file);
    const FitModel from_preset =
        fit_model_from_preset(find_model_preset("gemma3-270m"), parse_weight_type("bf16"));
    EXPECT_EQ(from_file.n_params, from_preset.n_params);
    FitRequest request;
    request.device_memory_bytes = 16 * kGiB;
    for (const int64_t context : {100, 512, 513, 32768}) {
        request.context = context;
        EXPECT_EQ(plan_fit(from_file, request).kv_bytes_per_sequence,
                  plan_fit(from_preset, request).kv_bytes_per_sequence)
            << "context " << context;
    }
}

}  // namespace
}  // namespace ladder::tools
