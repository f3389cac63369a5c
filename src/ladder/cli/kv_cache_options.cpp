#include "ladder/cli/kv_cache_options.h"

#include "ladder/util/check.h"

namespace ladder::cli {

namespace {

const std::vector<std::string> kNames = {"auto", "f16", "bf16", "q8_0", "q4_0"};

tensor::DType parsed(const std::string& name) {
    const auto type = model::parse_kv_cache_type(name);
    LADDER_CHECK(type.has_value(), "CLI11 checked the name");
    return *type;
}

}  // namespace

void add_kv_cache_type_options(CLI::App& command, KvCacheTypeFlags& flags) {
    command
        .add_option("--kv-cache-dtype", flags.both,
                    "type of the KV cache's K and V rows: auto (= f16), f16, bf16, q8_0 or q4_0 "
                    "(ggml's blocks of 32 values with an f16 scale: q8_0 about halves the "
                    "cache)")
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

model::KvCacheTypes kv_cache_types(const KvCacheTypeFlags& flags) {
    const tensor::DType both = parsed(flags.both);
    return {flags.key.empty() ? both : parsed(flags.key),
            flags.value.empty() ? both : parsed(flags.value)};
}

tools::KvCacheStorageTypes kv_storage_types(const model::KvCacheTypes& types) {
    return {tools::storage_type(types.key), tools::storage_type(types.value)};
}

void set_kv_cache_types(const KvCacheTypeFlags& flags, model::Model& model) {
    model.set_kv_cache_types(kv_cache_types(flags));
}

}  // namespace ladder::cli
