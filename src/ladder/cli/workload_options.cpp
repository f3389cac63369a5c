#include "ladder/cli/workload_options.h"

namespace ladder::cli {

void add_endpoint_flag(CLI::App& command, WorkloadFlags& flags) {
    command.add_option("--endpoint", flags.endpoint, "completions (default) or chat")
        ->check(CLI::IsMember({"completions", "chat"}));
}

void add_dataset_flags(CLI::App& command, WorkloadFlags& flags, tools::DatasetOptions& dataset) {
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
    command.add_option("--num-prompts", dataset.n_prompts, "requests (default 1000)");
    command.add_option("--seed", dataset.seed, "seed of the prompts and arrivals (default 0)");
}

void add_request_rate_flag(CLI::App& command, WorkloadFlags& flags) {
    command.add_option("--request-rate", flags.request_rate,
                       "requests/s, Poisson arrivals; inf (default): all at once");
    command.add_option("--burstiness", flags.burstiness,
                       "gamma shape of the gaps between arrivals: 1 Poisson (default), below 1 "
                       "burstier, above steadier (vLLM's --burstiness)");
}

void add_goodput_flags(CLI::App& command, WorkloadFlags& flags) {
    command.add_option("--slo-ttft-ms", flags.slo_ttft_ms, "goodput: TTFT objective, ms");
    command.add_option("--slo-tpot-ms", flags.slo_tpot_ms, "goodput: TPOT objective, ms");
    command.add_option("--gpu-hour-cost", flags.gpu_hour_cost,
                       "$ per GPU-hour: report the cost per million output tokens");
}

void apply_workload_flags(const CLI::App& command, const WorkloadFlags& flags,
                          tools::DatasetOptions& dataset, tools::SummaryOptions& summary) {
    dataset.endpoint =
        flags.endpoint == "chat" ? tools::BenchEndpoint::Chat : tools::BenchEndpoint::Completions;
    dataset.kind = flags.dataset.front();
    if (flags.dataset.size() > 1) dataset.path = flags.dataset[1];
    if (command.count("--input-len") > 0) dataset.input_len = flags.input_len;
    if (command.count("--output-len") > 0) dataset.output_len = flags.output_len;
    if (command.count("--slo-ttft-ms") > 0) summary.slo.ttft_ms = flags.slo_ttft_ms;
    if (command.count("--slo-tpot-ms") > 0) summary.slo.tpot_ms = flags.slo_tpot_ms;
    if (command.count("--gpu-hour-cost") > 0) summary.gpu_hour_cost = flags.gpu_hour_cost;
}

}  // namespace ladder::cli
