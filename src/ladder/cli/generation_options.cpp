#include "ladder/cli/generation_options.h"

#include <cstdio>

#include "ladder/cli/chat_template_options.h"
#include "ladder/cli/commands.h"

namespace ladder::cli {

void add_generation_options(CLI::App& command, GenerationOptions& options) {
    add_model_option(command, options.model_path);
    add_threads_option(command, options.n_threads);
    add_attention_option(command, options.attention);
    add_kv_cache_type_options(command, options.kv_cache_types);
    command.add_option("-n,--n-predict", options.n_predict, "most tokens to generate")
        ->default_val(options.n_predict)
        ->check(CLI::Range(1, 1 << 24));
    command
        .add_option("-c,--ctx-size", options.context,
                    "context size in tokens (default: 4096, capped at the model's)")
        ->check(CLI::Range(16, 1 << 24));
    command.add_option("--temp", options.sampling.temperature, "temperature; 0 is greedy")
        ->default_val(0.8f);
    command.add_option("--top-k", options.sampling.top_k, "top-k (0: off)")->default_val(40);
    command.add_option("--top-p", options.sampling.top_p, "top-p (1: off)")->default_val(0.95f);
    command.add_option("--min-p", options.sampling.min_p, "min-p (0: off)")->default_val(0.05f);
    command
        .add_option("--repeat-penalty", options.sampling.repetition_penalty,
                    "repetition penalty (1: off)")
        ->default_val(1.0f);
    command
        .add_option("--repeat-last-n", options.sampling.penalty_last_n,
                    "tokens the penalties look back over")
        ->default_val(64);
    command
        .add_option("--frequency-penalty", options.sampling.frequency_penalty,
                    "OpenAI frequency penalty")
        ->default_val(0.0f);
    command
        .add_option("--presence-penalty", options.sampling.presence_penalty,
                    "OpenAI presence penalty")
        ->default_val(0.0f);
    command.add_option("-s,--seed", options.seed, "random seed (same seed, same output)");
    add_chat_template_options(command, options.chat_template);
}

engine::SamplingParams sampling_params(const CLI::App& command, const GenerationOptions& options) {
    engine::SamplingParams params = options.sampling;
    if (command.count("--seed") > 0) params.seed = options.seed;
    engine::validate(params);
    return params;
}

void print_timings(const engine::GenerationStats& stats) {
    const double prompt_speed =
        stats.prompt_seconds > 0 ? stats.n_prompt_tokens / stats.prompt_seconds : 0.0;
    // The first sampled token comes from the prompt pass; the rest each cost a step.
    const int decode_steps = stats.n_generated_tokens - 1;
    const double generation_speed = decode_steps > 0 && stats.generation_seconds > 0
                                        ? decode_steps / stats.generation_seconds
                                        : 0.0;
    std::fprintf(stderr,
                 "\n[prompt: %d tokens, %.1f tokens/s | generation: %d tokens, %.1f tokens/s | "
                 "time to first token: %.0f ms]\n",
                 stats.n_prompt_tokens, prompt_speed, stats.n_generated_tokens, generation_speed,
                 stats.time_to_first_token * 1000.0);
}

}  // namespace ladder::cli
