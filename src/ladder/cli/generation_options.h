// Flags shared by `ladder run` and `ladder chat`: model, threads, sampling,
// context, chat template.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ladder/cli/kv_cache_options.h"
#include "ladder/engine/generate.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/engine/sampling_params.h"
#include "ladder/model/attention_path.h"

namespace ladder::cli {

struct GenerationOptions {
    std::string model_path;
    int n_threads = 1;
    int n_predict = 256;
    int context = 4096;
    engine::ChatTemplateOverride chat_template;
    engine::SamplingParams sampling;
    uint64_t seed = 0;
    model::AttentionPath attention = model::kDefaultAttentionPath;
    KvCacheTypeFlags kv_cache_types;
};

void add_generation_options(CLI::App& command, GenerationOptions& options);
// The sampling parameters with the seed applied when one was given.
engine::SamplingParams sampling_params(const CLI::App& command, const GenerationOptions& options);
// Prints prompt and generation speeds and time to first token to stderr.
void print_timings(const engine::GenerationStats& stats);

}  // namespace ladder::cli
