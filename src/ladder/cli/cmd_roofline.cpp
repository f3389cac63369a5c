// `ladder roofline`: for each decode batch size, the arithmetic intensity of
// a step, what bounds it (memory or compute) and the tokens/s ceiling on this
// machine, from the model's weights and KV per token and the machine's
// measured (or given) bandwidth and kernel peak.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ladder/cli/commands.h"
#include "ladder/cli/kv_cache_options.h"
#include "ladder/cli/machine_ceilings.h"
#include "ladder/cli/markdown_table.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/tools/decode_traffic.h"
#include "ladder/tools/fit_model.h"
#include "ladder/tools/model_traffic.h"
#include "ladder/tools/report_format.h"
#include "ladder/tools/roofline.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

using ordered_json = nlohmann::ordered_json;  // fields print in the order written

struct RooflineOptions {
    std::string model_path;
    int n_threads = 1;
    int64_t context = 512;
    std::vector<int64_t> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    std::optional<double> bandwidth_gbs;  // given instead of measured
    std::optional<double> peak_gops;
    bool json = false;
    KvCacheTypeFlags kv_cache_types;
};

// Where each machine figure came from, for the report.
struct MachineFigures {
    tools::MachineCeilings ceilings;
    std::string bandwidth_source;  // "given" or how it was measured
    std::string peak_source;
};

MachineFigures machine_figures(const RooflineOptions& options, const gguf::GgufFile& file,
                               const tools::ModelTraffic& traffic) {
    MachineFigures figures;
    std::optional<util::ThreadPool> pool;
    if (!options.bandwidth_gbs || !options.peak_gops) pool.emplace(options.n_threads);
    if (options.bandwidth_gbs) {
        figures.ceilings.bandwidth_bytes_per_second = *options.bandwidth_gbs * 1e9;
        figures.bandwidth_source =
            fmt::format("{:.1f} GB/s memory read bandwidth (given)", *options.bandwidth_gbs);
    } else {
        const tools::MemoryBandwidth measured = measure_bandwidth_with_progress(*pool);
        figures.ceilings.bandwidth_bytes_per_second = measured.bytes_per_second;
        figures.bandwidth_source = describe(measured);
    }
    if (options.peak_gops) {
        figures.ceilings.peak_ops_per_second = *options.peak_gops * 1e9;
        figures.peak_source = fmt::format("{:.1f} GOP/s matmul peak (given)", *options.peak_gops);
    } else {
        const std::vector<tools::KernelPeak> peaks =
            measure_kernel_peaks_with_progress(file, traffic, *pool);
        figures.ceilings.peak_ops_per_second =
            tools::mixed_peak_ops_per_second(traffic, peaks, 1.0);
        figures.peak_source =
            fmt::format("{:.1f} GOP/s matmul peak for this model's mix of weight types: {}",
                        figures.ceilings.peak_ops_per_second / 1e9, describe(peaks));
    }
    return figures;
}

const char* bound_name(const tools::RooflinePoint& point) {
    return point.compute_bound ? "compute" : "memory";
}

void print_json(const tools::FitModel& shape, const tools::DecodeTraffic& traffic,
                const MachineFigures& machine, const std::vector<tools::RooflinePoint>& points,
                std::optional<int64_t> knee) {
    ordered_json rows = ordered_json::array();
    for (const auto& point : points) {
        rows.push_back({{"batch", point.batch},
                        {"ops_per_byte", point.ops_per_byte},
                        {"bound", bound_name(point)},
                        {"tokens_per_second", point.tokens_per_second},
                        {"tokens_per_second_per_sequence", point.tokens_per_second_per_sequence}});
    }
    const ordered_json out = {
        {"model", shape.source},
        {"context", traffic.context},
        {"weight_bytes_per_step", traffic.weight_bytes_per_step},
        {"kv_bytes_per_token", traffic.kv_bytes_per_token},
        {"kv_cache_dtype", traffic.kv_types},
        {"matmul_ops_per_token", traffic.matmul_ops_per_token},
        {"attention_ops_per_token", traffic.attention_ops_per_token},
        {"ops_per_token", traffic.ops_per_token()},
        {"bandwidth_gbs", machine.ceilings.bandwidth_bytes_per_second / 1e9},
        {"bandwidth_source", machine.bandwidth_source},
        {"peak_gops", machine.ceilings.peak_ops_per_second / 1e9},
        {"peak_source", machine.peak_source},
        {"ridge_ops_per_byte", machine.ceilings.ridge_ops_per_byte()},
        {"knee_batch", knee ? json(*knee) : json(nullptr)},
        {"points", rows},
    };
    std::cout << out.dump(2) << '\n';
}

void print_text(const tools::FitModel& shape, const tools::DecodeTraffic& traffic,
                const MachineFigures& machine, const std::vector<tools::RooflinePoint>& points,
                std::optional<int64_t> knee) {
    const auto mb = [](double bytes) { return fmt::format("{:.2f} MB", bytes / 1e6); };
    fmt::print("model      {} ({:.1f} M parameters)\n", shape.source,
               static_cast<double>(shape.n_params) / 1e6);
    fmt::print("weights    {} read once per decode step, shared by every sequence in it\n",
               mb(traffic.weight_bytes_per_step));
    fmt::print("KV cache   {} read per token at context {} ({}; each sequence reads its own)\n",
               mb(traffic.kv_bytes_per_token), traffic.context, traffic.kv_types);
    fmt::print("ops        {:.1f} M per token: {:.1f} M in matmuls, {:.1f} M in attention\n",
               traffic.ops_per_token() / 1e6, traffic.matmul_ops_per_token / 1e6,
               traffic.attention_ops_per_token / 1e6);
    fmt::print("bandwidth  {}\n", machine.bandwidth_source);
    fmt::print("peak       {}\n", machine.peak_source);
    fmt::print("ridge      {:.2f} ops/byte: a step with fewer ops per byte is memory-bound\n\n",
               machine.ceilings.ridge_ops_per_byte());
    const std::vector<TableColumn> columns = {{"batch", 6, true},
                                              {"ops/byte", 9, true},
                                              {"bound", 7, false},
                                              {"tokens/s", 10, true},
                                              {"per sequence", 12, true}};
    fmt::print("{}", markdown_header(columns));
    for (const auto& point : points) {
        const std::vector<std::string> cells = {
            std::to_string(point.batch),
            fmt::format("{:.2f}", point.ops_per_byte),
            bound_name(point),
            fmt::format("{:.1f}", point.tokens_per_second),
            fmt::format("{:.1f}", point.tokens_per_second_per_sequence),
        };
        fmt::print("{}", markdown_row(columns, cells));
    }
    if (knee) {
        fmt::print(
            "\nknee: batch {}; from there compute bounds the step and tokens/s stops "
            "growing with the batch ({:.1f})\n",
            *knee,
            tools::compute_ceiling_tokens_per_second(traffic.ops_per_token(),
                                                     machine.ceilings.peak_ops_per_second));
    } else {
        fmt::print(
            "\nknee: none; every sequence's KV reads cost more time than its ops, so "
            "memory bounds every batch\n");
    }
}

void run_roofline(const RooflineOptions& options) {
    const auto file = gguf::GgufFile::open(resolve_model_path(options.model_path));
    const tools::FitModel shape = tools::fit_model_from_gguf(*file);
    const tools::ModelTraffic weights = tools::model_traffic(file->tensors());
    // auto's types (f16, or bf16 under --attention fast) are the same size.
    const tools::DecodeTraffic traffic = tools::decode_traffic(
        weights, shape, options.context,
        kv_storage_types(kv_cache_types(options.kv_cache_types, model::kDefaultAttentionPath)));
    const MachineFigures machine = machine_figures(options, *file, weights);
    std::vector<tools::RooflinePoint> points;
    for (const int64_t batch : options.batches) {
        points.push_back(tools::roofline_point(traffic, machine.ceilings, batch));
    }
    const std::optional<int64_t> knee = tools::knee_batch(traffic, machine.ceilings);
    if (options.json) {
        print_json(shape, traffic, machine, points, knee);
    } else {
        print_text(shape, traffic, machine, points, knee);
    }
}

}  // namespace

void add_roofline_command(CLI::App& app) {
    auto options = std::make_shared<RooflineOptions>();
    CLI::App* command = app.add_subcommand(
        "roofline", "Decode's roofline: intensity, bound and tokens/s ceiling per batch size");
    add_model_option(*command, options->model_path);
    add_threads_option(*command, options->n_threads);
    command
        ->add_option("-c,--context", options->context,
                     "tokens in each sequence's KV cache, which every decoded token reads")
        ->default_val(512)
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
    command
        ->add_option("--batch", options->batches,
                     "decode batch sizes, comma-separated (default 1,2,4,...,256)")
        ->delimiter(',')
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    command
        ->add_option("--bandwidth", options->bandwidth_gbs,
                     "memory read bandwidth in GB/s, instead of measuring it")
        ->check(CLI::Range(1e-3, 1e6));
    command
        ->add_option("--peak", options->peak_gops,
                     "matmul kernel peak in GOP/s, instead of measuring it")
        ->check(CLI::Range(1e-3, 1e9));
    add_kv_cache_type_options(*command, options->kv_cache_types);
    command->add_flag("--json", options->json, "print one JSON object");
    command->callback([options] { run_roofline(*options); });
}

}  // namespace ladder::cli
