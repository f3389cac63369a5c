// `ladder simulate`: a serving fleet on paper. Takes `ladder bench`'s
// workload flags, a step-cost profile (a JSON file, or the roofline of a
// device preset running a model preset), replicas and a router, and
// reports what bench would measure. tools/sim_session does the work.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cstdio>
#include <fstream>
#include "ladder/cli/commands.h"
#include "ladder/cli/engine_options.h"
#include "ladder/cli/workload_options.h"
#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_json.h"
#include "ladder/tools/sim_calibrate.h"
#include "ladder/tools/sim_profile.h"
#include "ladder/tools/sim_session.h"
#include "ladder/tools/sim_trace_convert.h"
#include "ladder/tools/trace_summary.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

struct SimulateFlags {
    tools::SimulateConfig config;
    std::string profile_path;
    std::string device;
    std::string preset;
    double efficiency = 0.5;
    double bytes_per_parameter = 2.0;
    int32_t gpus_per_replica = 1;
    std::string router = "round-robin";
    WorkloadFlags workload;
    // The prefix cache's tiers below memory (none unless a size is given).
    std::string disk_size;
    double disk_gbps = 16.0;  // 2 GB/s: one NVMe drive's reads
    std::string remote_size;
    double remote_gbps = 10.0;  // a 10 GbE link to the Redis
    double remote_latency_ms = 0.5;
    double kv_link_gbps = 400.0;  // one NDR InfiniBand NIC a prefill replica
};

// Gigabits per second as bytes per second.
double bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }

tools::StepProfile load_profile(const SimulateFlags& flags) {
    if (!flags.profile_path.empty()) {
        if (!flags.device.empty() || !flags.preset.empty())
            util::fail("give --profile or --device with --preset, not both");
        if (flags.gpus_per_replica != 1)
            util::fail("--gpus-per-replica is the roofline's; a --profile gives gpus_per_replica");
        return tools::read_profile(flags.profile_path);
    }
    if (flags.device.empty() || flags.preset.empty())
        util::fail("give --profile FILE, or --device and --preset for a roofline profile");
    return tools::roofline_profile(flags.device, flags.preset, flags.efficiency,
                                   flags.bytes_per_parameter, 0.9, flags.gpus_per_replica);
}

void run_simulate_command(const CLI::App& command, SimulateFlags& flags) {
    tools::SimulateConfig& config = flags.config;
    tools::ArrivalOptions& arrivals = config.simulation.arrivals;
    arrivals.request_rate = tools::parse_request_rate(flags.workload.request_rate);
    arrivals.burstiness = flags.workload.burstiness;
    if (!config.replay_path.empty()) {
        // A trace's times are the arrivals: a flag that would shape them is refused.
        for (const char* flag : {"--request-rate", "--burstiness", "--diurnal-amplitude",
                                 "--diurnal-period", "--dataset"}) {
            if (command.count(flag) > 0) {
                util::fail(
                    "{} does not apply to --replay (the trace gives the requests and "
                    "their arrival times)",
                    flag);
            }
        }
    }
    config.simulation.profile = load_profile(flags);
    tools::ReplicaOptions& replica = config.simulation.replica;
    if (!flags.disk_size.empty()) {
        replica.disk.capacity_bytes = parse_byte_size(flags.disk_size, "--kv-disk-cache-size");
    }
    replica.disk.bytes_per_s = bytes_per_s(flags.disk_gbps);
    if (!flags.remote_size.empty()) {
        replica.remote.capacity_bytes = parse_byte_size(flags.remote_size, "--kv-remote-size");
    }
    replica.remote.bytes_per_s = bytes_per_s(flags.remote_gbps);
    replica.remote.latency_s = flags.remote_latency_ms * 1e-3;
    config.simulation.router = tools::parse_router(flags.router);
    const bool prefill_given = command.count("--prefill-replicas") > 0;
    if (prefill_given != (command.count("--decode-replicas") > 0)) {
        util::fail("give --prefill-replicas and --decode-replicas together");
    }
    if (prefill_given && command.count("--replicas") > 0) {
        util::fail("give --replicas (colocated) or --prefill-replicas with --decode-replicas, not both");
    }
    if (!prefill_given && command.count("--kv-link-gbps") > 0) {
        util::fail("--kv-link-gbps needs --prefill-replicas and --decode-replicas");
    }
    config.simulation.kv_link_bytes_per_s = bytes_per_s(flags.kv_link_gbps);
    config.n_prompts_given = command.count("--num-prompts") > 0;
    apply_workload_flags(command, flags.workload, config.dataset, config.summary);
    tools::run_simulation(config);
}

struct CalibrateFlags {
    EngineOptions engine;
    std::string output_path;
    int32_t n_passes = 3;
    int32_t n_engines = 1;   // engines running the grid at once (replicas sharing the host)
    // Fit served runs' steps instead of running the grid: one trace per replica
    // of a fleet, or one server's.
    std::vector<std::string> trace_paths;
    // Profiles (a grid calibration's) whose prices the trace fit holds.
    std::string logit_row_price_of;
    std::string attention_prices_of;
};

void run_calibrate_command(const CalibrateFlags& flags) {
    if (flags.output_path.empty()) util::fail("calibrate needs -o PROFILE.json");
    const std::string model_path = resolve_model_path(flags.engine.model_path);
    engine::ModelBundle bundle = load_engine_bundle(flags.engine, model_path);
    const engine::EngineConfig config = engine_config(flags.engine, bundle);
    if (!flags.trace_paths.empty()) {
        // Only the KV plan is needed: no engine runs, so no cache is allocated.
        const std::string source =
            fmt::format("measured: the served steps of trace{} {} ({} engine threads, {})",
                        flags.trace_paths.size() > 1 ? "s" : "", fmt::join(flags.trace_paths, ", "),
                        flags.engine.n_threads, model_path);
        std::vector<tools::TraceSummary> traces;
        for (const std::string& path : flags.trace_paths)
            traces.push_back(tools::read_trace_summary(path));
        tools::HeldPrices held;
        std::string held_source;
        if (!flags.logit_row_price_of.empty()) {
            held.hold_logit_rows_of(tools::read_profile(flags.logit_row_price_of));
            held_source += fmt::format("; logit-row price of {}", flags.logit_row_price_of);
        }
        if (!flags.attention_prices_of.empty()) {
            held.hold_attention_of(tools::read_profile(flags.attention_prices_of));
            held_source += fmt::format("; attention prices of {}", flags.attention_prices_of);
        }
        const tools::Calibration calibration = tools::calibrate_from_traces(
            traces, engine::plan_kv_cache(config, *bundle.model), source + held_source, held);
        tools::write_json_file(flags.output_path, tools::profile_json(calibration.profile));
        std::printf("%s\n%lld steps fitted\n", tools::format_profile(calibration.profile).c_str(),
                    static_cast<long long>(calibration.n_steps));
        return;
    }
    // One engine per replica that will share this host, each with its own
    // model, pool and cache, as separate `ladder serve` processes have.
    std::vector<engine::ModelBundle> bundles;
    bundles.push_back(std::move(bundle));
    while (static_cast<int32_t>(bundles.size()) < flags.n_engines)
        bundles.push_back(load_engine_bundle(flags.engine, model_path));
    std::vector<std::unique_ptr<util::ThreadPool>> pools;
    std::vector<std::unique_ptr<engine::EngineCore>> cores;
    std::vector<engine::EngineCore*> core_pointers;
    for (engine::ModelBundle& each : bundles) {
        pools.push_back(std::make_unique<util::ThreadPool>(flags.engine.n_threads));
        cores.push_back(std::make_unique<engine::EngineCore>(*each.model, *each.tokenizer,
                                                             *pools.back(), config));
        core_pointers.push_back(cores.back().get());
    }
    tools::ReplicaOptions replica;
    replica.max_num_seqs = config.max_num_seqs;
    replica.max_num_batched_tokens = config.max_num_batched_tokens;
    replica.prefix_caching = config.prefix_caching;
    const std::string engines =
        flags.n_engines > 1 ? fmt::format(", {} engines at once", flags.n_engines) : std::string();
    const std::string source =
        fmt::format("measured: ladder simulate calibrate of {}, {} threads{}", model_path,
                    flags.engine.n_threads, engines);
    const tools::Calibration calibration = tools::calibrate(
        core_pointers, replica, tools::default_calibration_grid(), source, flags.n_passes);
    tools::write_json_file(flags.output_path, tools::profile_json(calibration.profile));
    std::printf("%s\n%lld steps measured, %lld differed from the simulator's schedule\n",
                tools::format_profile(calibration.profile).c_str(),
                static_cast<long long>(calibration.n_steps),
                static_cast<long long>(calibration.n_mismatched_steps));
    const std::vector<double>& passes = calibration.pass_seconds;
    std::string totals;
    for (double seconds : passes)
        totals += fmt::format("{}{:.2f} s", totals.empty() ? "" : ", ", seconds);
    std::printf("passes: %s (each step's median fitted)\n", totals.c_str());
    const auto [fastest, slowest] = std::minmax_element(passes.begin(), passes.end());
    // A pass this much slower than another means the machine was busy for a while.
    if (passes.size() > 1 && *fastest > 0.0 && *slowest > 1.1 * *fastest) {
        std::fprintf(stderr,
                     "warning: the slowest pass took %.0f%% longer than the fastest; the machine's "
                     "speed varied, so calibrate again when it is quiet\n",
                     100.0 * (*slowest / *fastest - 1.0));
    }
}

struct ConvertFlags {
    std::string from;
    std::string input_path;
    std::string output_path;
    WorkloadFlags workload;
    tools::DatasetOptions dataset;
};

void run_convert_command(const CLI::App& command, ConvertFlags& flags) {
    tools::ArrivalOptions arrivals;
    arrivals.request_rate = tools::parse_request_rate(flags.workload.request_rate);
    arrivals.burstiness = flags.workload.burstiness;
    tools::check_arrival_options(arrivals);
    std::vector<tools::TraceRecord> records;
    if (flags.from == "bench-json") {
        nlohmann::json result;
        try {
            std::ifstream file(flags.input_path);
            if (!file) util::fail("cannot read {}", flags.input_path);
            result = nlohmann::json::parse(file);
        } catch (const nlohmann::json::parse_error& error) {
            util::fail("{}: not JSON ({})", flags.input_path, error.what());
        }
        records =
            tools::trace_from_bench_json(result, flags.input_path, arrivals, flags.dataset.seed);
    } else {
        tools::DatasetOptions dataset = flags.dataset;
        dataset.kind = "sharegpt";
        dataset.path = flags.input_path;
        if (command.count("--num-prompts") == 0) dataset.n_prompts = INT64_MAX;
        records = tools::trace_from_prompts(tools::make_dataset(dataset), arrivals, dataset.seed);
    }
    tools::write_trace(flags.output_path, records);
    std::printf("%zu requests written to %s\n", records.size(), flags.output_path.c_str());
}

void add_convert_command(CLI::App& simulate) {
    auto flags = std::make_shared<ConvertFlags>();
    CLI::App* convert = simulate.add_subcommand(
        "convert", "Turn a ladder bench --json result or a ShareGPT file into a --replay trace");
    convert->add_option("--from", flags->from, "bench-json or sharegpt")
        ->required()
        ->check(CLI::IsMember({"bench-json", "sharegpt"}));
    convert->add_option("input", flags->input_path, "the file to convert")->required();
    convert->add_option("-o,--output", flags->output_path, "the trace JSONL to write")->required();
    add_request_rate_flag(*convert, flags->workload);
    convert->add_option("--num-prompts", flags->dataset.n_prompts,
                        "sharegpt: requests to take (default: all)");
    convert->add_option("--seed", flags->dataset.seed,
                        "seed of the sample and the arrivals (default 0)");
    convert->callback([flags, convert] { run_convert_command(*convert, *flags); });
}

}  // namespace

void add_simulate_command(CLI::App& app) {
    auto flags = std::make_shared<SimulateFlags>();
    tools::SimulateConfig& config = flags->config;
    tools::SimulationOptions& simulation = config.simulation;
    CLI::App* command = app.add_subcommand(
        "simulate", "Simulate a serving fleet on a workload (ladder bench's flags, no server)");
    command->add_option("--profile", flags->profile_path,
                        "step-cost profile JSON (fixed_ms, per_token_us, per_context_ns, ...)");
    command->add_option("--device", flags->device,
                        "roofline profile: " + tools::roofline_device_names());
    command->add_option("--preset", flags->preset,
                        "roofline profile: the model (ladder fit's presets)");
    command->add_option("--efficiency", flags->efficiency,
                        "roofline profile: share of each ceiling reached (default 0.5)");
    command->add_option("--bytes-per-parameter", flags->bytes_per_parameter,
                        "roofline profile: weight bytes per parameter (default 2)");
    command->add_option("--gpus-per-replica", flags->gpus_per_replica,
                        "roofline profile: GPUs one replica spans, ceilings added (default 1)");
    command->add_option("--replicas", simulation.n_replicas, "engine replicas (default 1)");
    command->add_option("--prefill-replicas", simulation.n_prefill_replicas,
                        "disaggregated: replicas that only prefill (with --decode-replicas)");
    command->add_option("--decode-replicas", simulation.n_decode_replicas,
                        "disaggregated: replicas that only decode, fed KV by the prefill ones");
    command->add_option("--kv-link-gbps", flags->kv_link_gbps,
                        "disaggregated: each prefill replica's link for sending KV, gigabits/s "
                        "(default 400)");
    command->add_option("--router", flags->router,
                        "round-robin (default), least-loaded or prefix-affinity");
    command->add_option(
        "--balance-factor", simulation.balance_factor,
        "prefix-affinity: most load a replica takes, times the mean (default 1.25)");
    command->add_option("--max-num-seqs", simulation.replica.max_num_seqs,
                        "sequences in one step, as serve (default 256)");
    command->add_option("--max-num-batched-tokens", simulation.replica.max_num_batched_tokens,
                        "tokens in one step, as serve (default 512)");
    command->add_flag("!--no-prefix-cache", simulation.replica.prefix_caching,
                      "replicas without a prefix cache");
    command->add_option("--kv-disk-cache-size", flags->disk_size,
                        "each replica's disk tier of the prefix cache, SIZE (serve's default is "
                        "10GiB; default: none)");
    command->add_option("--kv-disk-gbps", flags->disk_gbps,
                        "the disk tier's read rate in gigabits/s (default 16: 2 GB/s)");
    command->add_option("--kv-remote-size", flags->remote_size,
                        "the fleet's remote (Redis) tier of the prefix cache, SIZE (its maxmemory; "
                        "default: none)");
    command->add_option("--kv-remote-gbps", flags->remote_gbps,
                        "the remote tier's link in gigabits/s (default 10)");
    command->add_option("--kv-remote-latency-ms", flags->remote_latency_ms,
                        "the remote tier's round trip, once a step that reads it (default 0.5)");
    add_endpoint_flag(*command, flags->workload);
    add_dataset_flags(*command, flags->workload, config.dataset);
    add_request_rate_flag(*command, flags->workload);
    command->add_option("--max-concurrency", simulation.max_concurrency,
                        "most requests in flight (default: no limit)");
    command->add_option("--diurnal-amplitude", simulation.arrivals.diurnal_amplitude,
                        "the rate follows rate x (1 - A cos(2 pi t / period)): lowest at the "
                        "start, highest half a period in; A in [0, 1) (default 0: constant)");
    command->add_option("--diurnal-period", simulation.arrivals.diurnal_period_s,
                        "seconds of the diurnal curve's period (default 86400)");
    command->add_option("--replay", config.replay_path,
                        "replay a trace JSONL (arrival_s, input_len, output_len[, prefix_id, "
                        "prefix_len]) instead of --dataset");
    add_goodput_flags(*command, flags->workload);
    command->add_flag("--find-min-replicas", config.find_min_replicas,
                      "search for the fewest replicas (from --replicas, or from --prefill-replicas "
                      "and --decode-replicas) meeting the SLOs");
    command->add_option("--slo-attainment", config.slo_attainment,
                        "--find-min-replicas: share of requests that must meet the SLOs "
                        "(default 0.99)");
    command->add_option("--max-replicas", config.max_replicas,
                        "--find-min-replicas: give up above this many in all (default 4096)");
    command->add_option("--json", config.json_path,
                        "write the results, under ladder bench --json's keys, to FILE");
    command
        ->add_option("--sweep-request-rate", config.sweep_request_rates,
                     "run once per request rate, one after another: 5,10,20")
        ->delimiter(',');
    command->add_option("--plot", config.plot_dir,
                        "write bench's PNG and SVG charts (latency vs load; with "
                        "--find-min-replicas, SLO attainment vs replicas) to DIR (needs gnuplot)");
    command->add_flag("!--no-progress", config.show_progress, "no progress line on stderr");
    auto calibrate_flags = std::make_shared<CalibrateFlags>();
    CLI::App* calibrate = command->add_subcommand(
        "calibrate", "Measure this engine's step costs into a profile for --profile");
    add_engine_options(*calibrate, calibrate_flags->engine);
    CLI::Option* passes =
        calibrate
            ->add_option("--passes", calibrate_flags->n_passes,
                         "times to run the grid; each step's median time is fitted")
            ->check(CLI::Range(1, 100))
            ->capture_default_str();
    CLI::Option* engines =
        calibrate
            ->add_option("--engines", calibrate_flags->n_engines,
                         "engines that run the grid at once, each on -t threads: a profile of "
                         "replicas that share this host (their memory bandwidth and caches)")
            ->check(CLI::Range(1, 64))
            ->capture_default_str();
    CLI::Option* from_trace =
        calibrate
            ->add_option("--from-trace", calibrate_flags->trace_paths,
                         "fit the steps of `ladder serve --trace` files (served with these engine "
                         "flags; one per replica of a fleet) instead of running the grid")
            ->excludes(passes)
            ->excludes(engines);
    // Served decode batches have a logit row per row, and long decodes read
    // about what they attend to: a trace fit can trade these prices against
    // the curve, where the grid's steps set them apart.
    calibrate
        ->add_option("--logit-row-price-of", calibrate_flags->logit_row_price_of,
                     "with --from-trace: take the price of a logit row from this profile (a grid "
                     "calibration) instead of fitting it")
        ->check(CLI::ExistingFile)
        ->needs(from_trace);
    calibrate
        ->add_option("--attention-prices-of", calibrate_flags->attention_prices_of,
                     "with --from-trace: take the prices of attention and of KV read from this "
                     "profile instead of fitting them")
        ->check(CLI::ExistingFile)
        ->needs(from_trace);
    calibrate->add_option("-o,--output", calibrate_flags->output_path, "the profile JSON to write")
        ->required();
    calibrate->callback([calibrate_flags] { run_calibrate_command(*calibrate_flags); });
    add_convert_command(*command);
    command->callback([flags, command] {
        for (const CLI::App* sub : command->get_subcommands()) {
            if (sub->parsed()) return;
        }
        run_simulate_command(*command, *flags);
    });
}

}  // namespace ladder::cli
