// Every `ladder` subcommand registers itself on the CLI11 app here. Commands
// are thin: they parse flags and call the modules.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ladder/model/attention_path.h"

namespace ladder::cli {

void add_info_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_logprobs_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_cost_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_model_command(CLI::App& app);
void add_roofline_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_trace_summary_command(CLI::App& app);
void add_simulate_command(CLI::App& app);

// Adds `-m,--model PATH` with the default model's help text.
void add_model_option(CLI::App& command, std::string& model_path);
// Adds `-t,--threads N` (default: all cores).
void add_threads_option(CLI::App& command, int& n_threads);
// Adds `--attention exact|fast` (default: model::kDefaultAttentionPath).
void add_attention_option(CLI::App& command, model::AttentionPath& path);
// The model path to open: the one given, or the default model. Throws
// util::InputError with the fetch command when the file is missing.
std::string resolve_model_path(const std::string& given);

}  // namespace ladder::cli
