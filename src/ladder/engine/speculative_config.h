// Speculative decoding's settings, as vLLM's --speculative-config names them
// (the CLI maps the JSON onto this; the engine knows no JSON).
#pragma once

#include <cstdint>
#include <string>

namespace ladder::engine {

enum class SpeculativeMethod {
    Ngram,       // prompt lookup in the sequence's own tokens
    Suffix,      // a suffix index over earlier requests of the same cache salt
    DraftModel,  // a second, smaller model with the same vocabulary
};

const char* speculative_method_name(SpeculativeMethod method);

struct SpeculativeConfig {
    SpeculativeMethod method = SpeculativeMethod::Ngram;
    // The most tokens drafted for a sequence in one step; the policy drafts
    // fewer where they are unlikely to be accepted or the step is compute-bound.
    int32_t num_speculative_tokens = 5;
    // ngram: the n-gram lengths looked up, longest first.
    int32_t prompt_lookup_max = 5;
    int32_t prompt_lookup_min = 5;
    // draft_model: the GGUF file of the draft.
    std::string model;
    // suffix: the index's depth (match plus proposal), the requests it keeps,
    // the proposal's bound as a multiple of the match length, and the least
    // estimated probability a proposed token may have (vLLM's defaults).
    int32_t suffix_max_tree_depth = 24;
    int32_t suffix_max_cached_requests = 10000;
    double suffix_max_spec_factor = 1.0;
    double suffix_min_token_prob = 0.1;
    // suffix: the index's memory bound, in nodes (about 64 bytes each).
    int64_t suffix_max_nodes = int64_t{1} << 22;
    // Off: every decode drafts num_speculative_tokens (as far as the budget
    // and max_tokens allow), whatever it costs, as vLLM does; for measuring a
    // fixed draft length, and for tests of the drafters and verification,
    // which must not depend on the machine's timing.
    bool adaptive = true;
};

// Throws util::InputError naming the first setting out of range.
void validate(const SpeculativeConfig& config);

}  // namespace ladder::engine
