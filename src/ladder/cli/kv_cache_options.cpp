#include "ladder/cli/kv_cache_options.h"

#include "ladder/util/check.h"

namespace ladder::cli {

namespace {

const std::vector<std::string> kNames = {"auto", "f16", "bf16", "q8_0", "q4_0"};

tensor::DType parsed(const std::string& name, tensor::DType auto_type) {
    const auto type = model::parse_kv_cache_type(name, auto_type);
    LADDER_CHECK(type.has_value(), "CLI11 checked the name");
    return *type;
}

}  // namespace

void add_kv_cache_type_options(CLI::App& command, KvCacheTypeFlags& flags) {
    command
        .add_option("--kv-cache-dtype", flags.both,
                    "type of the KV cache's K and V: auto (f16; with --attention fast on a "
                    "CPU with AVX512-BF16, bf16, stored in the tiles its kernel reads), f16, "
                    "bf16, q8_0 or q4_0 (ggml's blocks of 32 values with an f16 scale: q8_0 "
                    "about halves the cache)")
        ->check(CLI::IsMember(kNames, CLI::ignore_case))
        ->default_str("auto");
    command
        .add_option("--cache-type-k", flags.key,
                    "type of the K rows alone (llama.cpp's name; default: --kv-cache-dtype)")
        ->check(CLI::IsMember(kNames, CLI::ignore_case));
    command
        .add_option("--cache-type-v", flags.value,
                    "type of the V rows alone (llama.cpp's name; default: --kv-cache-dtype)")
        ->check(CLI::IsMember(kNames, CLI::ignore_case));
}

model::KvCacheTypes kv_cache_types(const KvCacheTypeFlags& flags, model::AttentionPath attention,
                                   int32_t block_size) {
    tensor::DType auto_type = model::auto_kv_cache_type(attention);
    // A type whose tiles do not fit the blocks is no one's choice: auto falls back to f16.
    if (block_size < model::min_block_size({auto_type, auto_type})) auto_type = tensor::DType::F16;
    const tensor::DType both = parsed(flags.both, auto_type);
    return {flags.key.empty() ? both : parsed(flags.key, auto_type),
            flags.value.empty() ? both : parsed(flags.value, auto_type)};
}

tools::KvCacheStorageTypes kv_storage_types(const model::KvCacheTypes& types) {
    return {tools::storage_type(types.key), tools::storage_type(types.value)};
}

void set_kv_cache_types(const KvCacheTypeFlags& flags, model::Model& model, int32_t block_size) {
    model.set_kv_cache_types(kv_cache_types(flags, model.attention_path(), block_size));
}

}  // namespace ladder::cli
