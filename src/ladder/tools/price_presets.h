// Hosted-API prices `ladder cost --preset` knows, as data, each with the
// date it was read: prices change, so a preset is a worked example, not a quote.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ladder::tools {

// Dollars per million tokens.
struct HostedPrices {
    double input = 0.0;  // uncached input
    double output = 0.0;
    double cached_input = 0.0;  // input read from the provider's prompt cache
    // Input written to the cache; nullopt: the uncached input price (DeepSeek,
    // OpenAI). Anthropic charges more for a write.
    std::optional<double> cache_write;
};

struct PricePreset {
    std::string_view name;         // what --preset takes: "deepseek-r1"
    std::string_view description;  // "DeepSeek-R1 (deepseek-reasoner), February 2025"
    HostedPrices prices;
};

std::span<const PricePreset> price_presets();
// Throws util::InputError listing the preset names when name is unknown.
const PricePreset& find_price_preset(std::string_view name);
std::string price_preset_names();

}  // namespace ladder::tools
