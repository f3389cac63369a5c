// The price table, from each provider's public pricing page on the date given.
#include "ladder/tools/price_presets.h"

#include <array>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

const std::array kPricePresets = {
    // api-docs.deepseek.com/quick_start/pricing, February 2025 (standard
    // hours): deepseek-reasoner $0.55 miss, $0.14 hit, $2.19 output.
    PricePreset{"deepseek-r1", "DeepSeek-R1, February 2025", {0.55, 2.19, 0.14, std::nullopt}},
    // The same page: deepseek-chat (V3) after the launch discount ended,
    // 8 February 2025: $0.27 miss, $0.07 hit, $1.10 output.
    PricePreset{"deepseek-v3", "DeepSeek-V3, February 2025", {0.27, 1.10, 0.07, std::nullopt}},
    // openai.com/api/pricing, gpt-4o-2024-08-06 as of early 2025: $2.50 input,
    // $1.25 cached input, $10.00 output.
    PricePreset{"gpt-4o", "OpenAI GPT-4o, early 2025", {2.50, 10.00, 1.25, std::nullopt}},
    // The same page, gpt-4o-mini: $0.15, $0.075 cached, $0.60 output.
    PricePreset{"gpt-4o-mini", "OpenAI GPT-4o mini, early 2025", {0.15, 0.60, 0.075, std::nullopt}},
    // anthropic.com/pricing, Claude 3.5 Sonnet as of early 2025: $3 input,
    // $15 output, $0.30 cache read, $3.75 cache write.
    PricePreset{
        "claude-3.5-sonnet", "Anthropic Claude 3.5 Sonnet, early 2025", {3.00, 15.00, 0.30, 3.75}},
};

}  // namespace

std::span<const PricePreset> price_presets() {
    return kPricePresets;
}

std::string price_preset_names() {
    std::string out;
    for (const auto& preset : kPricePresets) {
        if (!out.empty()) out += ", ";
        out += preset.name;
    }
    return out;
}

const PricePreset& find_price_preset(std::string_view name) {
    for (const auto& preset : kPricePresets) {
        if (preset.name == name) return preset;
    }
    util::fail("unknown price preset '{}'; valid: {}", name, price_preset_names());
}

}  // namespace ladder::tools
