#include "ladder/engine/speculative_config.h"

#include "ladder/util/error.h"

namespace ladder::engine {

const char* speculative_method_name(SpeculativeMethod method) {
    switch (method) {
        case SpeculativeMethod::Ngram:
            return "ngram";
        case SpeculativeMethod::Suffix:
            return "suffix";
        case SpeculativeMethod::DraftModel:
            return "draft_model";
    }
    return "unknown";
}

void validate(const SpeculativeConfig& config) {
    constexpr int32_t kMaxDraft = 64;
    if (config.num_speculative_tokens < 1 || config.num_speculative_tokens > kMaxDraft) {
        util::fail("--speculative-config: num_speculative_tokens must be in [1, {}] (got {})",
                   kMaxDraft, config.num_speculative_tokens);
    }
    if (config.method == SpeculativeMethod::Ngram) {
        if (config.prompt_lookup_min < 1) {
            util::fail("--speculative-config: prompt_lookup_min must be >= 1 (got {})",
                       config.prompt_lookup_min);
        }
        if (config.prompt_lookup_max < config.prompt_lookup_min) {
            util::fail(
                "--speculative-config: prompt_lookup_max ({}) must be >= prompt_lookup_min ({})",
                config.prompt_lookup_max, config.prompt_lookup_min);
        }
    }
    if (config.method == SpeculativeMethod::DraftModel && config.model.empty()) {
        util::fail("--speculative-config: method draft_model needs \"model\": the draft's GGUF file");
    }
    if (config.method != SpeculativeMethod::DraftModel && !config.model.empty()) {
        util::fail("--speculative-config: \"model\" is for method draft_model, not {}",
                   speculative_method_name(config.method));
    }
    if (config.method == SpeculativeMethod::Suffix) {
        if (config.suffix_max_tree_depth < 2 || config.suffix_max_tree_depth > 1024) {
            util::fail("--speculative-config: suffix_decoding_max_tree_depth must be in [2, 1024] "
                       "(got {})",
                       config.suffix_max_tree_depth);
        }
        if (config.suffix_max_cached_requests < 0) {
            util::fail("--speculative-config: suffix_decoding_max_cached_requests must be >= 0 "
                       "(got {})",
                       config.suffix_max_cached_requests);
        }
        if (!(config.suffix_max_spec_factor > 0.0 && config.suffix_max_spec_factor <= 1024.0)) {
            util::fail("--speculative-config: suffix_decoding_max_spec_factor must be in (0, "
                       "1024] (got {})",
                       config.suffix_max_spec_factor);
        }
        if (!(config.suffix_min_token_prob >= 0.0 && config.suffix_min_token_prob <= 1.0)) {
            util::fail("--speculative-config: suffix_decoding_min_token_prob must be in [0, 1] "
                       "(got {})",
                       config.suffix_min_token_prob);
        }
    }
}

}  // namespace ladder::engine
