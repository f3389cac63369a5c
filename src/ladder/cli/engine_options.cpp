#include "ladder/cli/engine_options.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "ladder/cli/chat_template_options.h"
#include "ladder/cli/commands.h"
#include "ladder/cli/speculative_options.h"
#include "ladder/engine/cache_directory.h"
#include "ladder/engine/model_identity.h"
#include "ladder/util/error.h"

namespace ladder::cli {

void add_engine_options(CLI::App& command, EngineOptions& options) {
    add_model_option(command, options.model_path);
    add_threads_option(command, options.n_threads);
    add_attention_option(command, options.attention);
    add_kv_cache_type_options(command, options.kv_cache_types);
    add_chat_template_options(command, options.chat_template);
    command.add_option("--kv-cache-mem", options.kv_cache_mem,
                       "KV cache budget: bytes, or with a unit (512MiB, 2GiB, 1.5GB); default: "
                       "what max-num-seqs full contexts need, at most 4 GiB and a quarter of RAM");
    command.add_option("--block-size", options.block_size, "tokens per KV cache block")
        ->default_val(options.block_size)
        ->check(CLI::Range(1, 1024));
    command.add_option("--max-num-seqs", options.max_num_seqs, "most sequences in one step")
        ->default_val(options.max_num_seqs)
        ->check(CLI::Range(1, 65536));
    command
        .add_option("--max-num-batched-tokens", options.max_num_batched_tokens,
                    "most tokens in one step; longer prompts are prefilled in chunks")
        ->default_val(options.max_num_batched_tokens)
        ->check(CLI::Range(1, 1 << 20));
    command
        .add_option("--max-model-len", options.max_model_len,
                    "context limit per request, prompt and output (default: the model's)")
        ->check(CLI::Range(1, 1 << 24));
    command.add_flag("!--no-prefix-cache", options.prefix_caching,
                     "do not reuse the KV of prompt prefixes computed before (for comparison)");
    command.add_option("--kv-disk-cache", options.kv_disk_cache,
                       "directory for the prefix cache's disk tier: full KV blocks are kept "
                       "there and read back on a later hit, across restarts");
    command
        .add_option("--kv-disk-cache-size", options.kv_disk_cache_size,
                    "byte limit of the disk tier, oldest blocks out first")
        ->default_val(options.kv_disk_cache_size);
    command.add_option("--kv-remote", options.kv_remote,
                       "redis://HOST:PORT[/DB]: the prefix cache's remote tier, shared by "
                       "replicas; full KV blocks are written there and read back on a miss "
                       "(eviction is Redis's own: maxmemory with allkeys-lru)");
    command
        .add_option("--kv-remote-timeout-ms", options.kv_remote_timeout_ms,
                    "how long a batch of 4 blocks read from --kv-remote may take before "
                    "the rest of the prompt is computed instead")
        ->default_val(options.kv_remote_timeout_ms)
        ->check(CLI::Range(0.1, 10000.0));
    command
        .add_option("--tool-call-parser", options.tool_call_parser,
                    "the format of the model's tool calls: hermes, llama3_json, mistral "
                    "(default: picked from the chat template)")
        ->check(CLI::IsMember({"hermes", "llama3_json", "mistral"}));
    command
        .add_option("--reasoning-parser", options.reasoning_parser,
                    "deepseek_r1: <think>...</think> goes to reasoning_content; none: left in "
                    "the content (default: deepseek_r1 for templates that write <think>)")
        ->check(CLI::IsMember({"deepseek_r1", "none"}));
    command
        .add_option("--grammar-compile-timeout", options.grammar_compile_timeout,
                    "seconds a structured-output grammar may take to compile; a slower one "
                    "gets a 400")
        ->default_val(options.grammar_compile_timeout)
        ->check(CLI::Range(0.001, 3600.0));
    add_speculative_option(command, options.speculative_config);
}

void configure_bundle(const EngineOptions& options, engine::ModelBundle& bundle) {
    bundle.chat_options.tool_call_parser = options.tool_call_parser;
    bundle.chat_options.reasoning_parser = options.reasoning_parser;
    engine::GrammarLimits limits = bundle.grammars->limits();
    limits.compile_timeout_seconds = options.grammar_compile_timeout;
    bundle.grammars->set_limits(limits);
}

engine::ModelBundle load_engine_bundle(const EngineOptions& options,
                                       const std::string& model_path) {
    engine::ModelBundle bundle = engine::load_model_bundle(model_path, options.chat_template);
    bundle.model->set_attention_path(options.attention);
    set_kv_cache_types(options.kv_cache_types, *bundle.model, options.block_size);
    configure_bundle(options, bundle);
    return bundle;
}

engine::EngineConfig engine_config(const EngineOptions& options,
                                   const engine::ModelBundle& bundle) {
    engine::EngineConfig config;
    config.block_size = options.block_size;
    if (!options.kv_cache_mem.empty()) {
        config.kv_cache_bytes = parse_byte_size(options.kv_cache_mem, "--kv-cache-mem");
    }
    config.max_num_seqs = options.max_num_seqs;
    config.max_num_batched_tokens = options.max_num_batched_tokens;
    if (options.max_model_len > 0) config.max_model_len = options.max_model_len;
    config.prefix_caching = options.prefix_caching;
    config.kv_disk_cache_dir = options.kv_disk_cache;
    config.kv_disk_cache_bytes =
        parse_byte_size(options.kv_disk_cache_size, "--kv-disk-cache-size");
    if (!options.kv_remote.empty()) config.kv_remote = engine::parse_redis_url(options.kv_remote);
    config.kv_remote_timeout_seconds = options.kv_remote_timeout_ms / 1000.0;
    // Only the tiers below memory need the model's identity (memory holds one model).
    if (!config.kv_disk_cache_dir.empty()) {
        const engine::CacheDirectory dir(config.kv_disk_cache_dir, "--kv-disk-cache");
        config.model_key = engine::cached_model_identity(*bundle.file, dir);
    } else if (config.kv_remote) {
        config.model_key = engine::model_identity(*bundle.file);
    }
    config.speculative = parse_speculative_config(options.speculative_config);
    return config;
}

int64_t parse_byte_size(std::string_view text, std::string_view flag) {
    static constexpr std::array<std::pair<std::string_view, double>, 9> kUnits{{
        {"", 1.0},
        {"B", 1.0},
        {"KB", 1e3},
        {"MB", 1e6},
        {"GB", 1e9},
        {"KiB", 1024.0},
        {"MiB", 1024.0 * 1024.0},
        {"GiB", 1024.0 * 1024.0 * 1024.0},
        {"TiB", 1024.0 * 1024.0 * 1024.0 * 1024.0},
    }};
    double number = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    std::string_view unit = error == std::errc{}
                                ? text.substr(static_cast<size_t>(end - text.data()))
                                : std::string_view{"?"};
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
        unit.remove_prefix(1);
    for (const auto& [name, scale] : kUnits) {
        if (unit != name) continue;
        const double bytes = number * scale;
        if (!std::isfinite(bytes) || bytes < 1.0 || bytes > 9.0e18) break;
        return static_cast<int64_t>(bytes);
    }
    util::fail("{} must be a positive size such as 1073741824, 512MiB or 2GiB (got '{}')", flag,
               text);
}

std::string kv_cache_summary(const engine::KvCachePlan& plan) {
    std::string summary =
        fmt::format("KV cache: {} blocks = {} tokens ({:.2f} GiB, {})", plan.n_blocks,
                    plan.n_tokens(), static_cast<double>(plan.bytes) / (1024.0 * 1024.0 * 1024.0),
                    model::kv_cache_types_name(plan.types));
    if (plan.n_window_blocks > 0) {
        summary += fmt::format(", plus {} blocks for the {}-token sliding-window layers",
                               plan.n_window_blocks, plan.window);
    }
    return summary;
}

}  // namespace ladder::cli
