// Flags of the commands that run the serving engine (`ladder generate`,
// `ladder serve`): model, threads, KV cache and the scheduler's budgets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ladder/cli/kv_cache_options.h"
#include "ladder/engine/engine_config.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/model/attention_path.h"

namespace ladder::cli {

struct EngineOptions {
    std::string model_path;
    int n_threads = 1;
    engine::ChatTemplateOverride chat_template;
    int block_size = 16;
    std::string kv_cache_mem;  // empty: the engine's default budget
    int max_num_seqs = 256;
    int max_num_batched_tokens = 512;
    int max_model_len = 0;  // 0: the model's context
    bool prefix_caching = true;
    std::string kv_disk_cache;  // directory; empty: no disk tier
    std::string kv_disk_cache_size = "10GiB";
    std::string kv_remote;                  // redis://HOST:PORT[/DB]; empty: no remote tier
    double kv_remote_timeout_ms = 20.0;     // per batch of blocks read
    std::string tool_call_parser;           // empty: picked from the chat template
    std::string reasoning_parser;           // empty: picked from the chat template
    double grammar_compile_timeout = 10.0;  // seconds
    model::AttentionPath attention = model::kDefaultAttentionPath;
    KvCacheTypeFlags kv_cache_types;
    std::string speculative_config;  // JSON; empty: off
};

void add_engine_options(CLI::App& command, EngineOptions& options);
// What the options say about reading the model's chat outputs and compiling
// grammars, set on the loaded bundle.
void configure_bundle(const EngineOptions& options, engine::ModelBundle& bundle);
// Loads the model at model_path (resolved) as the options set it up: its
// attention path, KV cache types and configure_bundle's settings.
engine::ModelBundle load_engine_bundle(const EngineOptions& options, const std::string& model_path);
// Throws util::InputError for a malformed size or URL, or an unusable
// disk-tier directory. With a disk or remote tier, the model's identity
// (which keys their blocks) is read from the directory's record or hashed
// from the whole file.
engine::EngineConfig engine_config(const EngineOptions& options, const engine::ModelBundle& bundle);
// "1073741824", "512MiB", "2GiB", "1.5GB": a byte count. Throws util::InputError.
int64_t parse_byte_size(std::string_view text, std::string_view flag);
// "KV cache: 4096 blocks = 65536 tokens (1.41 GiB, f16)", and the
// sliding-window group's blocks when the model has one.
std::string kv_cache_summary(const engine::KvCachePlan& plan);

}  // namespace ladder::cli
