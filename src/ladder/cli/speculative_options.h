// --speculative-config, as vLLM spells it: a JSON object such as
// '{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}'.
// Shared by `ladder run`, `ladder generate` and `ladder serve`.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ladder/engine/spec_decode_stats.h"
#include "ladder/engine/speculative_config.h"

namespace ladder::cli {

void add_speculative_option(CLI::App& command, std::string& json_text);

// nullopt for an empty text (speculation off). Throws util::InputError naming
// the key that is unknown, of the wrong type or out of range.
std::optional<engine::SpeculativeConfig> parse_speculative_config(const std::string& json_text);

// "speculative decoding: ngram, up to 5 tokens (prompt lookup 2..4)".
std::string speculative_summary(const engine::SpeculativeConfig& config);

// "speculative decoding: acceptance rate 81.2%, acceptance length 4.10, ...":
// acceptance rate and length, drafts, drafted and accepted tokens, and the
// acceptance at each position.
std::string speculative_stats_line(const engine::SpecDecodeStats& stats);

}  // namespace ladder::cli
