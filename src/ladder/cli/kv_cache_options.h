// `--kv-cache-dtype` and llama.cpp's `--cache-type-k` / `--cache-type-v`
// aliases, shared by every command that computes with the model.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ladder/model/kv_cache_storage.h"
#include "ladder/model/model.h"
#include "ladder/tools/decode_traffic.h"

namespace ladder::cli {

struct KvCacheTypeFlags {
    std::string both = "auto";  // --kv-cache-dtype
    std::string key;            // --cache-type-k; empty: both
    std::string value;          // --cache-type-v; empty: both
};

void add_kv_cache_type_options(CLI::App& command, KvCacheTypeFlags& flags);
// Tokens per KV block of the commands without --block-size (engine::Session's).
constexpr int32_t kSessionBlockSize = 16;

// The types the flags name under an attention path, for blocks of block_size
// tokens (auto: model::auto_kv_cache_type, or f16 where its tiles would not
// fit a block; the K and V flags win over --kv-cache-dtype).
model::KvCacheTypes kv_cache_types(const KvCacheTypeFlags& flags, model::AttentionPath attention,
                                   int32_t block_size = kSessionBlockSize);
// The same types as fit and roofline's arithmetic sizes them.
tools::KvCacheStorageTypes kv_storage_types(const model::KvCacheTypes& types);
// Sets them on the model, auto resolved for the model's attention path (set
// it first) and the blocks the command's cache uses; throws util::InputError
// when the model cannot hold them.
void set_kv_cache_types(const KvCacheTypeFlags& flags, model::Model& model,
                        int32_t block_size = kSessionBlockSize);

}  // namespace ladder::cli
