#include "ladder/cli/speculative_options.h"

#include <fmt/format.h>


#include <nlohmann/json.hpp>

#include "ladder/util/error.h"

namespace ladder::cli {

namespace {

using json = nlohmann::json;

constexpr const char* kFlag = "--speculative-config";

int32_t int_field(const json& value, const std::string& key) {
    if (!value.is_number_integer()) util::fail("{}: \"{}\" must be an integer", kFlag, key);
    const auto number = value.get<int64_t>();
    if (number < INT32_MIN || number > INT32_MAX) util::fail("{}: \"{}\" is out of range", kFlag, key);
    return static_cast<int32_t>(number);
}

double number_field(const json& value, const std::string& key) {
    if (!value.is_number()) util::fail("{}: \"{}\" must be a number", kFlag, key);
    return value.get<double>();
}

bool bool_field(const json& value, const std::string& key) {
    if (!value.is_boolean()) util::fail("{}: \"{}\" must be true or false", kFlag, key);
    return value.get<bool>();
}

std::string string_field(const json& value, const std::string& key) {
    if (!value.is_string()) util::fail("{}: \"{}\" must be a string", kFlag, key);
    return value.get<std::string>();
}

engine::SpeculativeMethod method_of(const std::string& name) {
    if (name == "ngram") return engine::SpeculativeMethod::Ngram;
    if (name == "suffix") return engine::SpeculativeMethod::Suffix;
    if (name == "draft_model") return engine::SpeculativeMethod::DraftModel;
    util::fail("{}: unknown method \"{}\" (ngram, suffix or draft_model)", kFlag, name);
}

}  // namespace

void add_speculative_option(CLI::App& command, std::string& json_text) {
    command.add_option(kFlag, json_text,
                       "speculative decoding, as vLLM's JSON: {\"method\": \"ngram\" | \"suffix\" | "
                       "\"draft_model\", \"num_speculative_tokens\": N, ...} (default: off)");
}

std::optional<engine::SpeculativeConfig> parse_speculative_config(const std::string& json_text) {
    if (json_text.empty()) return std::nullopt;
    json body;
    try {
        body = json::parse(json_text);
    } catch (const json::exception& error) {
        util::fail("{}: not valid JSON: {}", kFlag, error.what());
    }
    if (!body.is_object()) util::fail("{}: must be a JSON object", kFlag);
    engine::SpeculativeConfig config;
    std::optional<int32_t> lookup_max;
    std::optional<int32_t> lookup_min;
    bool has_method = false;
    bool has_count = false;
    for (const auto& [key, value] : body.items()) {
        if (key == "method") {
            config.method = method_of(string_field(value, key));
            has_method = true;
        } else if (key == "num_speculative_tokens") {
            config.num_speculative_tokens = int_field(value, key);
            has_count = true;
        } else if (key == "prompt_lookup_max") {
            lookup_max = int_field(value, key);
        } else if (key == "prompt_lookup_min") {
            lookup_min = int_field(value, key);
        } else if (key == "model") {
            config.model = string_field(value, key);
        } else if (key == "suffix_decoding_max_tree_depth") {
            config.suffix_max_tree_depth = int_field(value, key);
        } else if (key == "suffix_decoding_max_cached_requests") {
            config.suffix_max_cached_requests = int_field(value, key);
        } else if (key == "suffix_decoding_max_spec_factor") {
            config.suffix_max_spec_factor = number_field(value, key);
        } else if (key == "suffix_decoding_min_token_prob") {
            config.suffix_min_token_prob = number_field(value, key);
        } else if (key == "adaptive") {
            config.adaptive = bool_field(value, key);
        } else {
            util::fail("{}: unknown key \"{}\"", kFlag, key);
        }
    }
    // As vLLM: a model without a method is a draft model.
    if (!has_method) {
        if (config.model.empty()) util::fail("{}: \"method\" is required", kFlag);
        config.method = engine::SpeculativeMethod::DraftModel;
    }
    if (!has_count) util::fail("{}: \"num_speculative_tokens\" is required", kFlag);
    // As vLLM: both lengths default to 5, and one given alone sets the other.
    config.prompt_lookup_max = lookup_max.value_or(lookup_min.value_or(5));
    config.prompt_lookup_min = lookup_min.value_or(lookup_max.value_or(5));
    if ((lookup_max || lookup_min) && config.method != engine::SpeculativeMethod::Ngram) {
        util::fail("{}: prompt_lookup_max and prompt_lookup_min are for method ngram", kFlag);
    }
    engine::validate(config);
    return config;
}

std::string speculative_summary(const engine::SpeculativeConfig& config) {
    std::string detail;
    switch (config.method) {
        case engine::SpeculativeMethod::Ngram:
            detail = fmt::format(" (prompt lookup {}..{})", config.prompt_lookup_min,
                                 config.prompt_lookup_max);
            break;
        case engine::SpeculativeMethod::Suffix:
            detail = fmt::format(" (tree depth {}, {} cached requests)",
                                 config.suffix_max_tree_depth, config.suffix_max_cached_requests);
            break;
        case engine::SpeculativeMethod::DraftModel:
            detail = fmt::format(" (draft {})", config.model);
            break;
    }
    return fmt::format("speculative decoding: {}, up to {} tokens{}",
                       engine::speculative_method_name(config.method),
                       config.num_speculative_tokens, detail);
}

std::string speculative_stats_line(const engine::SpecDecodeStats& stats) {
    const engine::SpecDecodeSummary summary = engine::summarize(stats);
    std::string per_position;
    for (const double rate : summary.per_position_acceptance_rates) {
        per_position += fmt::format("{}{:.0f}%", per_position.empty() ? "" : " ", 100.0 * rate);
    }
    return fmt::format(
        "speculative decoding: acceptance rate {:.1f}%, acceptance length {:.2f}, {} drafts, {} "
        "draft tokens, {} accepted; per position {}",
        100.0 * summary.acceptance_rate, summary.acceptance_length, stats.n_drafts,
        stats.n_draft_tokens, stats.n_accepted_tokens, per_position);
}

}  // namespace ladder::cli
