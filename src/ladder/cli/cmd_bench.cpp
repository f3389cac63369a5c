// `ladder bench`: a serving benchmark client, like vLLM's `bench serve`,
// for any OpenAI-compatible endpoint. Parses flags into tools::BenchConfig;
// tools/bench_session does the rest.
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ladder/cli/commands.h"
#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_session.h"
#include "ladder/util/error.h"

namespace ladder::cli {

namespace {

struct BenchFlags {
    tools::BenchConfig config;
    std::string endpoint = "completions";
    std::vector<std::string> dataset = {"random"};  // KIND [FILE]
    int64_t input_len = 0;
    int64_t output_len = 0;
    std::string request_rate = "inf";
    double slo_ttft_ms = 0.0;
    double slo_tpot_ms = 0.0;
    double gpu_hour_cost = 0.0;
};

// The key: the flag, else $OPENAI_API_KEY, else $LADDER_API_KEY.
std::string api_key_from_environment() {
    for (const char* name : {"OPENAI_API_KEY", "LADDER_API_KEY"}) {
        if (const char* key = std::getenv(name); key != nullptr && *key != '\0') return key;
    }
    return {};
}

void run_bench_command(const CLI::App& command, BenchFlags& flags) {
    tools::BenchConfig& config = flags.config;
    if (command.count("--api-key") == 0) config.api_key = api_key_from_environment();
    config.dataset.endpoint =
        flags.endpoint == "chat" ? tools::BenchEndpoint::Chat : tools::BenchEndpoint::Completions;
    config.dataset.kind = flags.dataset.front();
    if (flags.dataset.size() > 1) config.dataset.path = flags.dataset[1];
    if (command.count("--input-len") > 0) config.dataset.input_len = flags.input_len;
    if (command.count("--output-len") > 0) config.dataset.output_len = flags.output_len;
    config.request_rate = tools::parse_request_rate(flags.request_rate);
    if (command.count("--slo-ttft-ms") > 0) config.summary.slo.ttft_ms = flags.slo_ttft_ms;
    if (command.count("--slo-tpot-ms") > 0) config.summary.slo.tpot_ms = flags.slo_tpot_ms;
    if (command.count("--gpu-hour-cost") > 0) config.summary.gpu_hour_cost = flags.gpu_hour_cost;
    tools::run_bench(config);
}

void add_endpoint_flags(CLI::App& command, BenchFlags& flags) {
    command.add_option("--base-url", flags.config.base_url,
                       "the server, with or without /v1 (default http://127.0.0.1:8080)");
    command.add_option("--api-key", flags.config.api_key,
                       "bearer key (default: $OPENAI_API_KEY, else $LADDER_API_KEY)");
    command.add_option("--model", flags.config.model,
                       "model to ask for (default: the first of GET /v1/models)");
    command.add_option("--endpoint", flags.endpoint, "completions (default) or chat")
        ->check(CLI::IsMember({"completions", "chat"}));
    command.add_option("--timeout", flags.config.timeout_s,
                       "seconds to wait for the next byte of a response (default 600)");
}

void add_dataset_flags(CLI::App& command, BenchFlags& flags) {
    tools::DatasetOptions& dataset = flags.config.dataset;
    command
        .add_option("--dataset", flags.dataset,
                    "random (default), prefix, sharegpt FILE or jsonl FILE")
        ->expected(1, 2);
    command.add_option("--input-len", flags.input_len,
                       "prompt tokens (random: default 1024; prefix: the question, default 200)");
    command.add_option("--output-len", flags.output_len,
                       "output tokens (random 128, prefix 300, jsonl 128; sharegpt: the reply's)");
    command.add_option("--range-ratio", dataset.range_ratio,
                       "draw lengths from [len x (1 - r), len x (1 + r)] (default 0)");
    command.add_option("--prefix-len", dataset.prefix_len,
                       "prefix: tokens every prompt shares (default 3000)");
    command.add_option("--num-prefixes", dataset.n_prefixes,
                       "prefix: distinct shared blocks, each prompt drawing one (default 1)");
    command.add_option("--num-prompts", dataset.n_prompts, "requests to send (default 1000)");
    command.add_option("--seed", dataset.seed, "seed of the prompts and arrivals (default 0)");
}

void add_load_and_report_flags(CLI::App& command, BenchFlags& flags) {
    tools::BenchConfig& config = flags.config;
    command.add_option("--request-rate", flags.request_rate,
                       "requests/s, Poisson arrivals; inf (default): all at once");
    command.add_option("--max-concurrency", config.max_concurrency,
                       "most requests in flight (default: no limit)");
    command
        .add_option("--sweep-concurrency", config.sweep_concurrency,
                    "run once per level, one after another: 1,2,4,8")
        ->delimiter(',');
    command.add_option("--slo-ttft-ms", flags.slo_ttft_ms, "goodput: TTFT objective, ms");
    command.add_option("--slo-tpot-ms", flags.slo_tpot_ms, "goodput: TPOT objective, ms");
    command.add_option("--gpu-hour-cost", flags.gpu_hour_cost,
                       "$ per GPU-hour: report the cost per million output tokens");
    command.add_option("--gpus-per-replica", config.summary.gpus_per_replica,
                       "GPUs the endpoint runs on, for the cost (default 1)");
    command.add_option("--json", config.json_path,
                       "write the results, under vLLM's key names, to FILE");
    command.add_option("--plot", config.plot_dir,
                       "write PNG and SVG charts and report.html to DIR (needs gnuplot)");
    command.add_flag("!--no-progress", config.show_progress, "no progress line on stderr");
}

}  // namespace

void add_bench_command(CLI::App& app) {
    auto flags = std::make_shared<BenchFlags>();
    CLI::App* command = app.add_subcommand(
        "bench", "Serving benchmark of an OpenAI-compatible endpoint (like vLLM's bench serve)");
    add_endpoint_flags(*command, *flags);
    add_dataset_flags(*command, *flags);
    add_load_and_report_flags(*command, *flags);
    command->callback([flags, command] { run_bench_command(*command, *flags); });
}

}  // namespace ladder::cli
