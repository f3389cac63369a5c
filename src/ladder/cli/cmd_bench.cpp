// `ladder bench`: a serving benchmark client, like vLLM's `bench serve`,
// for any OpenAI-compatible endpoint. Parses flags into tools::BenchConfig;
// tools/bench_session does the rest.
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ladder/cli/commands.h"
#include "ladder/cli/workload_options.h"
#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_session.h"
#include "ladder/util/error.h"

namespace ladder::cli {

namespace {

struct BenchFlags {
    tools::BenchConfig config;
    WorkloadFlags workload;
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
    apply_workload_flags(command, flags.workload, config.dataset, config.summary);
    config.request_rate = tools::parse_request_rate(flags.workload.request_rate);
    config.burstiness = flags.workload.burstiness;
    tools::run_bench(config);
}

void add_endpoint_flags(CLI::App& command, BenchFlags& flags) {
    command.add_option("--base-url", flags.config.base_url,
                       "the server, with or without /v1 (default http://127.0.0.1:8080)");
    command.add_option("--api-key", flags.config.api_key,
                       "bearer key (default: $OPENAI_API_KEY, else $LADDER_API_KEY)");
    command.add_option("--model", flags.config.model,
                       "model to ask for (default: the first of GET /v1/models)");
    add_endpoint_flag(command, flags.workload);
    command.add_option("--timeout", flags.config.timeout_s,
                       "seconds to wait for the next byte of a response (default 600)");
}

// vLLM bench's sampling flags: every request asks for the same.
void add_sampling_flags(CLI::App& command, BenchFlags& flags) {
    tools::BenchSampling& sampling = flags.config.sampling;
    command
        .add_option("--temperature", sampling.temperature,
                    "temperature every request asks for (default 0: greedy)")
        ->check(CLI::NonNegativeNumber);
    command.add_option("--top-p", sampling.top_p, "top_p to send (default: not sent)")
        ->check(CLI::Range(0.0, 1.0));
    command.add_option("--top-k", sampling.top_k, "top_k to send (default: not sent)");
    command.add_option("--min-p", sampling.min_p, "min_p to send (default: not sent)")
        ->check(CLI::Range(0.0, 1.0));
}

void add_load_and_report_flags(CLI::App& command, BenchFlags& flags) {
    tools::BenchConfig& config = flags.config;
    add_request_rate_flag(command, flags.workload);
    command.add_option("--max-concurrency", config.max_concurrency,
                       "most requests in flight (default: no limit)");
    command
        .add_option("--sweep-concurrency", config.sweep_concurrency,
                    "run once per level, one after another: 1,2,4,8")
        ->delimiter(',');
    add_goodput_flags(command, flags.workload);
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
    add_dataset_flags(*command, flags->workload, flags->config.dataset);
    add_sampling_flags(*command, *flags);
    add_load_and_report_flags(*command, *flags);
    command->callback([flags, command] { run_bench_command(*command, *flags); });
}

}  // namespace ladder::cli
