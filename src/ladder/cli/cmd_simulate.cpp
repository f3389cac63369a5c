// `ladder simulate`: a serving fleet on paper. Takes `ladder bench`'s
// workload flags, a step-cost profile (a JSON file, or the roofline of a
// device preset running a model preset), replicas and a router, and
// reports what bench would measure. tools/sim_session does the work.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <cstdio>
#include "ladder/cli/commands.h"
#include "ladder/cli/engine_options.h"
#include "ladder/cli/workload_options.h"
#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_json.h"
#include "ladder/tools/sim_calibrate.h"
#include "ladder/tools/sim_profile.h"
#include "ladder/tools/sim_session.h"
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
    std::string router = "round-robin";
    WorkloadFlags workload;
};

tools::StepProfile load_profile(const SimulateFlags& flags) {
    if (!flags.profile_path.empty()) {
        if (!flags.device.empty() || !flags.preset.empty())
            util::fail("give --profile or --device with --preset, not both");
        return tools::read_profile(flags.profile_path);
    }
    if (flags.device.empty() || flags.preset.empty())
        util::fail("give --profile FILE, or --device and --preset for a roofline profile");
    return tools::roofline_profile(flags.device, flags.preset, flags.efficiency,
                                   flags.bytes_per_parameter);
}

void run_simulate_command(const CLI::App& command, SimulateFlags& flags) {
    tools::SimulateConfig& config = flags.config;
    config.simulation.request_rate = tools::parse_request_rate(flags.workload.request_rate);
    config.simulation.profile = load_profile(flags);
    config.simulation.router = tools::parse_router(flags.router);
    config.simulation.seed = config.dataset.seed;
    apply_workload_flags(command, flags.workload, config.dataset, config.summary);
    tools::run_simulation(config);
}

struct CalibrateFlags {
    EngineOptions engine;
    std::string output_path;
};

void run_calibrate_command(const CalibrateFlags& flags) {
    if (flags.output_path.empty()) util::fail("calibrate needs -o PROFILE.json");
    const std::string model_path = resolve_model_path(flags.engine.model_path);
    engine::ModelBundle bundle = engine::load_model_bundle(model_path, flags.engine.chat_template);
    bundle.model->set_attention_path(flags.engine.attention);
    set_kv_cache_types(flags.engine.kv_cache_types, *bundle.model);
    configure_bundle(flags.engine, bundle);
    util::ThreadPool pool(flags.engine.n_threads);
    const engine::EngineConfig config = engine_config(flags.engine, bundle);
    engine::EngineCore core(*bundle.model, *bundle.tokenizer, pool, config);
    tools::ReplicaOptions replica;
    replica.max_num_seqs = config.max_num_seqs;
    replica.max_num_batched_tokens = config.max_num_batched_tokens;
    replica.prefix_caching = config.prefix_caching;
    const std::string source = fmt::format("measured: ladder simulate calibrate of {}, {} threads",
                                           model_path, flags.engine.n_threads);
    const tools::Calibration calibration =
        tools::calibrate(core, replica, tools::default_calibration_grid(), source);
    tools::write_json_file(flags.output_path, tools::profile_json(calibration.profile));
    std::printf("%s\n%lld steps measured, %lld differed from the simulator's schedule\n",
                tools::format_profile(calibration.profile).c_str(),
                static_cast<long long>(calibration.n_steps),
                static_cast<long long>(calibration.n_mismatched_steps));
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
    command->add_option("--replicas", simulation.n_replicas, "engine replicas (default 1)");
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
    add_endpoint_flag(*command, flags->workload);
    add_dataset_flags(*command, flags->workload, config.dataset);
    add_request_rate_flag(*command, flags->workload);
    command->add_option("--max-concurrency", simulation.max_concurrency,
                        "most requests in flight (default: no limit)");
    add_goodput_flags(*command, flags->workload);
    command->add_option("--json", config.json_path,
                        "write the results, under ladder bench --json's keys, to FILE");
    auto calibrate_flags = std::make_shared<CalibrateFlags>();
    CLI::App* calibrate = command->add_subcommand(
        "calibrate", "Measure this engine's step costs into a profile for --profile");
    add_engine_options(*calibrate, calibrate_flags->engine);
    calibrate->add_option("-o,--output", calibrate_flags->output_path, "the profile JSON to write")
        ->required();
    calibrate->callback([calibrate_flags] { run_calibrate_command(*calibrate_flags); });
    command->callback([flags, command, calibrate] {
        if (!calibrate->parsed()) run_simulate_command(*command, *flags);
    });
}

}  // namespace ladder::cli
