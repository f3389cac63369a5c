// `ladder bench-model`: prompt processing and text generation speed of a
// model, as llama-bench measures them, each beside the ceiling this machine
// puts on it: memory bandwidth for generation, the kernels' peak for prompts.
// --json prints llama-bench's record fields, so tools written for it read ours.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ladder/cli/commands.h"
#include "ladder/cli/kv_cache_options.h"
#include "ladder/cli/machine_ceilings.h"
#include "ladder/cli/markdown_table.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/model/model.h"
#include "ladder/tools/bench_model.h"
#include "ladder/tools/decode_traffic.h"
#include "ladder/tools/fit_model.h"
#include "ladder/tools/machine_info.h"
#include "ladder/tools/model_traffic.h"
#include "ladder/tools/report_format.h"
#include "ladder/tools/roofline.h"
#include "ladder/tools/sample_stats.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

// Ordered: the fields print in llama-bench's order, which people diff against.
using json = nlohmann::ordered_json;

struct BenchModelOptions {
    std::string model_path;
    int n_threads = 1;
    tools::ModelBenchOptions bench;
    bool json = false;
    model::AttentionPath attention = model::kDefaultAttentionPath;
    KvCacheTypeFlags kv_cache_types;
};

// Everything one run measured, shared by both outputs.
struct BenchRun {
    std::string model_path;
    std::string model_type;  // "llama 135M Q4_1", as llama-bench names models
    std::string cpu_path;
    std::string attention;  // "fast" or "exact"
    tools::KvCacheStorageTypes kv_types;  // what the cache stores K and V in
    model::KvCacheTypes kv_cache_types;   // the same, as the model holds them
    int n_threads = 0;
    tools::ModelTraffic traffic;
    tools::FitModel shape;  // the KV cache's layers, for the bytes attention reads
    tools::MemoryBandwidth bandwidth;  // DRAM: a buffer far past the last-level cache
    // A buffer the size of the weights a token reads: where the last-level
    // cache is larger than the model, decode can beat the DRAM ceiling.
    tools::MemoryBandwidth model_sized_bandwidth;
    std::vector<tools::KernelPeak> peaks;  // one per matrix type of the model
    std::vector<tools::ModelBenchTest> tests;
};

bool is_generation(const tools::ModelBenchTest& test) { return test.n_gen > 0; }

double ops_per_token(const BenchRun& run, const tools::ModelBenchTest& test) {
    return is_generation(test) ? run.traffic.decode_ops_per_token()
                               : run.traffic.prefill_ops_per_token(test.n_prompt);
}

// The kernels' peak for this test's mix of matrix types: a prompt pass runs
// the output matrix for its last token only.
double mixed_peak(const BenchRun& run, const tools::ModelBenchTest& test) {
    const double output_runs = is_generation(test) ? 1.0 : 1.0 / test.n_prompt;
    return tools::mixed_peak_ops_per_second(run.traffic, run.peaks, output_runs);
}

// KV bytes the test's average token reads: token i of a test at depth d sees
// d + i positions (itself included), as `ladder roofline -c` counts them.
double kv_bytes_per_token(const BenchRun& run, const tools::ModelBenchTest& test) {
    double sum = 0.0;
    const int32_t n_tokens = test.n_tokens();
    for (int32_t i = 1; i <= n_tokens; ++i) {
        sum +=
            tools::decode_traffic(run.traffic, run.shape, int64_t{test.n_depth} + i, run.kv_types)
                .kv_bytes_per_token;
    }
    return sum / n_tokens;
}

// What a generated token reads: every weight, and its KV cache.
double bytes_per_token(const BenchRun& run, const tools::ModelBenchTest& test) {
    return static_cast<double>(run.traffic.decode_bytes_per_token) + kv_bytes_per_token(run, test);
}

// Generation reads every weight and its context's KV per token; a prompt pass
// is arithmetic (its ceiling counts the matrix products, not attention).
double ceiling_tokens_per_second(const BenchRun& run, const tools::ModelBenchTest& test) {
    if (is_generation(test)) {
        return tools::memory_ceiling_tokens_per_second(bytes_per_token(run, test),
                                                       run.bandwidth.bytes_per_second);
    }
    return tools::compute_ceiling_tokens_per_second(ops_per_token(run, test),
                                                    mixed_peak(run, test));
}

// tg's ceiling at the model-sized buffer's read rate.
double cached_ceiling_tokens_per_second(const BenchRun& run, const tools::ModelBenchTest& test) {
    return tools::memory_ceiling_tokens_per_second(bytes_per_token(run, test),
                                                   run.model_sized_bandwidth.bytes_per_second);
}

json kernel_peaks_json(const BenchRun& run) {
    json out = json::object();
    for (const auto& peak : run.peaks)
        out[tensor::dtype_name(peak.dtype)] = peak.ops_per_second / 1e9;
    return out;
}

std::string model_type(const gguf::GgufFile& file, const model::Model& model,
                       const tools::ModelTraffic& traffic) {
    const auto size_label = file.get_string("general.size_label");
    const std::string size =
        size_label ? *size_label
                   : fmt::format("{:.0f}M", static_cast<double>(traffic.n_params) / 1e6);
    return fmt::format("{} {} {}", model.config().architecture, size,
                       tensor::dtype_name(traffic.dominant_matmul_dtype));
}

json test_record(const BenchRun& run, const tools::ModelBenchTest& test, const std::string& time) {
    std::vector<double> samples_ns(test.samples_ns.begin(), test.samples_ns.end());
    const std::vector<double> samples_ts = test.samples_tokens_per_second();
    const tools::SampleStats ns = tools::sample_stats(samples_ns);
    const tools::SampleStats ts = tools::sample_stats(samples_ts);
    const double ceiling = ceiling_tokens_per_second(run, test);
    return {
        {"build_commit", LADDER_BUILD_COMMIT},
        {"cpu_info", tools::cpu_model_name()},
        {"gpu_info", ""},
        {"backends", "CPU"},
        {"model_filename", run.model_path},
        {"model_type", run.model_type},
        {"model_size", run.traffic.model_bytes},
        {"model_n_params", run.traffic.n_params},
        {"n_batch", test.n_prompt > 0 ? test.n_prompt : 1},
        {"n_ubatch", test.n_prompt > 0 ? test.n_prompt : 1},
        {"n_threads", run.n_threads},
        {"type_k", model::kv_cache_type_name(run.kv_cache_types.key)},
        {"type_v", model::kv_cache_type_name(run.kv_cache_types.value)},
        {"n_gpu_layers", 0},
        {"use_mmap", true},
        {"n_prompt", test.n_prompt},
        {"n_gen", test.n_gen},
        {"n_depth", test.n_depth},
        {"test_time", time},
        {"avg_ns", static_cast<int64_t>(ns.mean)},
        {"stddev_ns", static_cast<int64_t>(ns.stddev)},
        {"avg_ts", ts.mean},
        {"stddev_ts", ts.stddev},
        {"samples_ns", test.samples_ns},
        {"samples_ts", samples_ts},
        // ladder's own: what bounds this test on this machine, and how close it came.
        {"cpu_path", run.cpu_path},
        {"attention", run.attention},
        {"kv_cache_dtype", tools::decode_traffic(run.traffic, run.shape, 1, run.kv_types).kv_types},
        {"ceiling_bound", is_generation(test) ? "memory_bandwidth" : "kernel_peak"},
        {"ceiling_ts", ceiling},
        {"ceiling_pct", 100.0 * ts.mean / ceiling},
        {"bytes_per_token", is_generation(test)
                                ? static_cast<int64_t>(bytes_per_token(run, test))
                                : static_cast<int64_t>(run.traffic.decode_bytes_per_token)},
        {"weight_bytes_per_token", run.traffic.decode_bytes_per_token},
        {"kv_bytes_per_token", static_cast<int64_t>(kv_bytes_per_token(run, test))},
        {"bandwidth_gbs", run.bandwidth.bytes_per_second / 1e9},
        {"model_sized_bandwidth_gbs", run.model_sized_bandwidth.bytes_per_second / 1e9},
        {"cached_ceiling_ts", cached_ceiling_tokens_per_second(run, test)},
        {"ops_per_token", ops_per_token(run, test)},
        {"peak_gops", mixed_peak(run, test) / 1e9},
        {"kernel_peaks_gops", kernel_peaks_json(run)},
    };
}

void print_json(const BenchRun& run) {
    const std::string time = tools::utc_timestamp();
    json records = json::array();
    for (const auto& test : run.tests) records.push_back(test_record(run, test, time));
    std::cout << records.dump(2) << '\n';
}

void print_table(const BenchRun& run) {
    const std::vector<TableColumn> columns = {
        {"model", 22, false},      {"size", 10, true},      {"params", 10, true},
        {"cpu_path", 8, false},    {"attention", 9, false}, {"kv", 4, false},
        {"threads", 7, true},      {"test", 13, true},      {"t/s", 16, true},
        {"ceiling t/s", 11, true}, {"% ceil", 7, true},
    };
    fmt::print("{}", markdown_header(columns));
    for (const auto& test : run.tests) {
        const tools::SampleStats ts = tools::sample_stats(test.samples_tokens_per_second());
        const double ceiling = ceiling_tokens_per_second(run, test);
        const std::vector<std::string> cells = {
            run.model_type,
            tools::format_bytes(run.traffic.model_bytes),
            fmt::format("{:.2f} M", static_cast<double>(run.traffic.n_params) / 1e6),
            run.cpu_path,
            run.attention,
            model::kv_cache_types_name(run.kv_cache_types),
            std::to_string(run.n_threads),
            test.name(),
            fmt::format("{:.2f} ± {:.2f}", ts.mean, ts.stddev),
            fmt::format("{:.1f}", ceiling),
            fmt::format("{:.1f}%", 100.0 * ts.mean / ceiling),
        };
        fmt::print("{}", markdown_row(columns, cells));
    }
    fmt::print("\nkernel peaks: {}\n", describe(run.peaks));
    for (const auto& test : run.tests) {
        const double ceiling = ceiling_tokens_per_second(run, test);
        if (is_generation(test)) {
            const double mb = static_cast<double>(run.traffic.decode_bytes_per_token) / 1e6;
            fmt::print(
                "{} ceiling: {:.1f} MB of weights + {:.1f} MB of KV cache read per token at {} = "
                "{:.1f} t/s\n",
                test.name(), mb, kv_bytes_per_token(run, test) / 1e6, describe(run.bandwidth),
                ceiling);
            const double cached = cached_ceiling_tokens_per_second(run, test);
            const double mean = tools::sample_stats(test.samples_tokens_per_second()).mean;
            fmt::print(
                "{} at a model-sized buffer's read rate ({:.1f} GB/s over {}; the last-level "
                "cache may hold part of the weights between tokens) = {:.1f} t/s, {:.1f}% "
                "reached\n",
                test.name(), run.model_sized_bandwidth.bytes_per_second / 1e9,
                tools::format_bytes(run.model_sized_bandwidth.buffer_bytes), cached,
                100.0 * mean / cached);
        } else {
            fmt::print(
                "{} ceiling: {:.1f} M ops per prompt token (2 x matmul parameters, the "
                "output matrix once per prompt) at {:.1f} GOP/s, the kernel peaks' mix "
                "for this model = {:.1f} t/s\n",
                test.name(), ops_per_token(run, test) / 1e6, mixed_peak(run, test) / 1e9, ceiling);
        }
    }
}

void run_bench_model(const BenchModelOptions& options) {
    const std::string cpu_path(kernels::cpu::isa_name(kernels::cpu::cpu_kernels().isa));
    const std::string path = resolve_model_path(options.model_path);
    const auto file = gguf::GgufFile::open(path);
    const auto model = model::load_model(*file);
    model->set_attention_path(options.attention);
    set_kv_cache_types(options.kv_cache_types, *model);
    tools::validate_model_bench_options(options.bench, model->config().context_length);

    BenchRun run;
    run.model_path = path;
    run.cpu_path = cpu_path;
    run.attention = std::string(model::attention_path_name(options.attention));
    run.kv_types = kv_storage_types(model->kv_cache_types());
    run.kv_cache_types = model->kv_cache_types();
    run.n_threads = options.n_threads;
    run.traffic = tools::model_traffic(file->tensors());
    run.shape = tools::fit_model_from_gguf(*file);
    run.model_type = model_type(*file, *model, run.traffic);
    util::ThreadPool pool(options.n_threads);
    // The machine first: the bandwidth pass evicts every cache, and the
    // benchmark's own warm-up then brings the weights back.
    run.bandwidth = measure_bandwidth_with_progress(pool);
    run.model_sized_bandwidth = measure_sized_bandwidth_with_progress(
        pool, static_cast<uint64_t>(run.traffic.decode_bytes_per_token));
    run.peaks = measure_kernel_peaks_with_progress(*file, run.traffic, pool);
    std::fprintf(stderr, "running each test once to warm up, then %d times...\n",
                 options.bench.n_repetitions);
    run.tests = tools::bench_model(*model, pool, options.bench);
    if (options.json) {
        print_json(run);
    } else {
        print_table(run);
    }
}

}  // namespace

void add_bench_model_command(CLI::App& app) {
    auto options = std::make_shared<BenchModelOptions>();
    CLI::App* command = app.add_subcommand("bench-model",
                                           "Prompt processing and generation tokens/s, as "
                                           "llama-bench, against the machine's ceilings");
    add_model_option(*command, options->model_path);
    add_threads_option(*command, options->n_threads);
    add_attention_option(*command, options->attention);
    add_kv_cache_type_options(*command, options->kv_cache_types);
    command
        ->add_option("-p,--n-prompt", options->bench.n_prompt,
                     "prompt tokens processed in one pass (0: skip the pp test)")
        ->default_val(512)
        ->check(CLI::Range(0, 1 << 20));
    command
        ->add_option("-n,--n-gen", options->bench.n_gen,
                     "tokens generated one at a time (0: skip the tg test)")
        ->default_val(128)
        ->check(CLI::Range(0, 1 << 20));
    command
        ->add_option("-d,--n-depth", options->bench.n_depths,
                     "tokens already in the KV cache under each test, comma-separated "
                     "(llama-bench's -d; the depth is filled untimed first)")
        ->delimiter(',')
        ->default_str("0")
        ->check(CLI::Range(0, 1 << 20));
    command
        ->add_option("-r,--repetitions", options->bench.n_repetitions,
                     "timed repetitions of each test, after one warm-up")
        ->default_val(5)
        ->check(CLI::Range(1, 1000));
    command->add_flag("--json", options->json,
                      "print a JSON list of records with llama-bench's field names");
    command->callback([options] { run_bench_model(*options); });
}

}  // namespace ladder::cli
