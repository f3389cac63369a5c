// Flags of the commands that run the serving engine (`ladder generate`,
// `ladder serve`): model, threads, KV cache and the scheduler's budgets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ladder/engine/engine_config.h"

namespace ladder::cli {

struct EngineOptions {
    std::string model_path;
    int n_threads = 1;
    std::string chat_template;
    int block_size = 16;
    std::string kv_cache_mem;  // empty: the engine's default budget
    int max_num_seqs = 256;
    int max_num_batched_tokens = 512;
    int max_model_len = 0;  // 0: the model's context
    bool prefix_caching = true;
    std::string kv_disk_cache;  // directory; empty: no disk tier
    std::string kv_disk_cache_size = "10GiB";
    std::string speculative_config;  // JSON; empty: off
};

void add_engine_options(CLI::App& command, EngineOptions& options);
// Throws util::InputError for a malformed size. model_key: the loaded
// model's identity (ModelBundle::identity), which keys the disk tier.
engine::EngineConfig engine_config(const EngineOptions& options, uint64_t model_key);
// "1073741824", "512MiB", "2GiB", "1.5GB": a byte count. Throws util::InputError.
int64_t parse_byte_size(std::string_view text, std::string_view flag);
// "KV cache: 4096 blocks = 65536 tokens (1.41 GiB)", and the sliding-window
// group's blocks when the model has one.
std::string kv_cache_summary(const engine::KvCachePlan& plan);

}  // namespace ladder::cli
