// `ladder fit`: does a model fit on a device, and how many users at what
// context. Parses flags, asks tools/fit for the numbers, prints a short table
// or one JSON object.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ladder/cli/commands.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/tools/device_presets.h"
#include "ladder/tools/fit.h"
#include "ladder/tools/report_format.h"
#include "ladder/util/error.h"

namespace ladder::cli {

namespace {

using nlohmann::json;

struct FitOptions {
    std::string model_path;
    std::string preset;
    std::string weights_dtype;
    std::string kv_dtype = "f16";
    std::string device;
    double mem_gib = 0.0;
    bool mem_given = false;
    int32_t n_devices = 1;
    int64_t context = 0;
    int64_t concurrency = 1;
    double memory_utilization = 0.9;
    double reserve_gib = 1.0;
    bool json = false;
};

// Memory beyond an exbibyte is a typo, and would not fit in 64 bits of bytes.
constexpr double kMaxGiB = 1024.0 * 1024.0 * 1024.0;

uint64_t gib_to_bytes(double value, const char* flag) {
    if (!std::isfinite(value) || value < 0.0 || value > kMaxGiB) {
        util::fail("{} must be a number of GiB between 0 and {}, not {}", flag, kMaxGiB, value);
    }
    return static_cast<uint64_t>(value * static_cast<double>(tools::kGiB));
}

tools::FitModel load_fit_model(const FitOptions& options) {
    if (!options.preset.empty() && !options.model_path.empty()) {
        util::fail("give either -m FILE or --preset NAME, not both");
    }
    if (!options.preset.empty()) {
        const std::string dtype = options.weights_dtype.empty() ? "bf16" : options.weights_dtype;
        return tools::fit_model_from_preset(tools::find_model_preset(options.preset),
                                            tools::parse_weight_type(dtype));
    }
    const auto file = gguf::GgufFile::open(resolve_model_path(options.model_path));
    tools::FitModel model = tools::fit_model_from_gguf(*file);
    if (!options.weights_dtype.empty()) {
        model = tools::with_weights_type(std::move(model),
                                         tools::parse_weight_type(options.weights_dtype));
        model.notes.push_back(
            fmt::format("weights estimated as if every tensor were {}", model.weights_type));
    }
    return model;
}

tools::FitRequest make_request(const FitOptions& options) {
    tools::FitRequest request;
    // --mem overrides the named device's size; alone it names no device.
    if (!options.device.empty() || !options.mem_given) {
        const tools::Device device =
            tools::find_device(options.device.empty() ? "cpu" : options.device);
        request.device_name = device.name;
        request.device_memory_bytes = device.memory_bytes;
    }
    if (options.mem_given) {
        if (!(options.mem_gib > 0.0)) {
            util::fail("--mem must be a positive number of GiB, not {}", options.mem_gib);
        }
        request.device_memory_bytes = gib_to_bytes(options.mem_gib, "--mem");
        request.device_name =
            request.device_name.empty()
                ? fmt::format("{} GiB device", options.mem_gib)
                : fmt::format("{} ({} GiB)", request.device_name, options.mem_gib);
    }
    request.n_devices = options.n_devices;
    request.memory_utilization = options.memory_utilization;
    request.reserve_bytes = gib_to_bytes(options.reserve_gib, "--reserve");
    if (options.context < 0) util::fail("--context must be positive, not {}", options.context);
    request.context = options.context;
    request.concurrency = options.concurrency;
    request.kv_type = tools::parse_kv_type(options.kv_dtype);
    return request;
}

int64_t n_sliding_layers(const tools::FitModel& model) {
    int64_t n = 0;
    for (const auto& layer : model.layers) n += layer.sliding ? 1 : 0;
    return n;
}

json fit_json(const tools::FitModel& model, const tools::FitRequest& request,
              const tools::FitPlan& plan, const std::vector<tools::FitSuggestion>& suggestions) {
    json out = {
        {"model", model.name},
        {"source", model.source},
        {"n_params", model.n_params},
        {"weights_dtype", model.weights_type},
        {"weights_bytes", plan.weights_bytes},
        {"weights_bytes_per_device", plan.weights_bytes_per_device},
        {"kv_dtype", request.kv_type.name},
        {"kv_bytes_per_token", plan.kv_bytes_per_token},
        {"kv_bytes_per_sequence", plan.kv_bytes_per_sequence},
        {"n_layers", model.layers.size()},
        {"n_sliding_layers", n_sliding_layers(model)},
        {"sliding_window", model.sliding_window},
        {"context", plan.context},
        {"trained_context", model.context_length},
        {"concurrency", request.concurrency},
        {"device", request.device_name},
        {"n_devices", request.n_devices},
        {"device_memory_bytes", request.device_memory_bytes},
        {"memory_bytes", plan.memory_bytes},
        {"memory_utilization", request.memory_utilization},
        {"reserve_bytes_per_device", request.reserve_bytes},
        {"usable_bytes", plan.usable_bytes},
        {"kv_budget_bytes", plan.kv_budget_bytes},
        {"shortfall_bytes", plan.shortfall_bytes},
        {"max_concurrent_sequences", plan.max_concurrent_sequences},
        {"max_context", plan.max_context ? json(*plan.max_context) : json(nullptr)},
        {"weights_fit", plan.weights_fit},
        {"fits", plan.fits},
    };
    json fixes = json::array();
    for (const auto& s : suggestions) fixes.push_back({{"flag", s.flag}, {"reason", s.reason}});
    out["suggestions"] = fixes;
    out["notes"] = model.notes;
    return out;
}

std::string sequences(int64_t n) {
    return tools::with_commas(n) + (n == 1 ? " sequence" : " sequences");
}

std::string beyond_training(const tools::FitModel& model, int64_t context) {
    if (model.context_length <= 0 || context <= model.context_length) return "";
    return fmt::format(" (beyond the trained {})", tools::with_commas(model.context_length));
}

void print_fit_row(const std::string& label, const std::string& value) {
    fmt::print("{:<13} {}\n", label, value);
}

void print_fit(const tools::FitModel& model, const tools::FitRequest& request,
               const tools::FitPlan& plan, const std::vector<tools::FitSuggestion>& suggestions) {
    const auto n_params = static_cast<double>(model.n_params);
    print_fit_row(
        "model",
        fmt::format("{} ({}), {:.2f} B parameters{}", model.name, model.source, n_params / 1e9,
                    model.context_length > 0
                        ? ", trained context " + tools::with_commas(model.context_length)
                        : ""));
    print_fit_row("weights",
              fmt::format(
                  "{}: {} ({:.2f} GB){}", model.weights_type, tools::format_gib(plan.weights_bytes),
                  static_cast<double>(plan.weights_bytes) / 1e9,
                  request.n_devices > 1
                      ? ", " + tools::format_gib(plan.weights_bytes_per_device) + " per device"
                      : ""));
    std::string kv = fmt::format("{}: {} per token, {} per sequence of {} tokens",
                                 request.kv_type.name, tools::format_bytes(plan.kv_bytes_per_token),
                                 tools::format_bytes(plan.kv_bytes_per_sequence),
                                 tools::with_commas(plan.context));
    if (const int64_t local = n_sliding_layers(model); local > 0) {
        kv += fmt::format(" ({} of {} layers keep only the last {} tokens)", local,
                          model.layers.size(), tools::with_commas(model.sliding_window));
    }
    print_fit_row("KV cache", kv);
    print_fit_row(
        "memory",
        fmt::format("{} × {}: {} total, {} usable ({:.0f}%, less {} reserve each)",
                    request.n_devices, request.device_name, tools::format_gib(plan.memory_bytes),
                    tools::format_gib(plan.usable_bytes), request.memory_utilization * 100.0,
                    tools::format_gib(request.reserve_bytes)));
    if (plan.weights_fit) {
        print_fit_row("KV budget", tools::format_gib(plan.kv_budget_bytes));
        print_fit_row("sequences",
                  fmt::format("{} of {} tokens", sequences(plan.max_concurrent_sequences),
                              tools::with_commas(plan.context)));
        print_fit_row("max context",
                  plan.max_context
                      ? fmt::format("{} tokens for {}{}", tools::with_commas(*plan.max_context),
                                    sequences(request.concurrency),
                                    beyond_training(model, *plan.max_context))
                      : "unbounded (every layer keeps only its window)");
    }
    if (plan.fits) {
        print_fit_row("fits", fmt::format("yes: {} of {} tokens", sequences(request.concurrency),
                                      tools::with_commas(plan.context)));
    } else if (!plan.weights_fit) {
        print_fit_row("fits", fmt::format("no: the weights need {} more than the usable memory",
                                      tools::format_gib(plan.shortfall_bytes)));
    } else {
        print_fit_row("fits", fmt::format("no: the KV budget holds {} of {} tokens, not {}",
                                      sequences(plan.max_concurrent_sequences),
                                      tools::with_commas(plan.context),
                                      tools::with_commas(request.concurrency)));
    }
    for (size_t i = 0; i < suggestions.size(); ++i) {
        print_fit_row(i == 0 ? "would fit" : "",
                  fmt::format("{}  ({})", suggestions[i].flag, suggestions[i].reason));
    }
    for (const auto& note : model.notes) print_fit_row("note", note);
}

void run_fit(const FitOptions& options) {
    const tools::FitModel model = load_fit_model(options);
    const tools::FitRequest request = make_request(options);
    const tools::FitPlan plan = tools::plan_fit(model, request);
    const std::vector<tools::FitSuggestion> suggestions = tools::suggest_fits(model, request, plan);
    if (options.json) {
        std::cout << fit_json(model, request, plan, suggestions).dump(2) << '\n';
    } else {
        print_fit(model, request, plan, suggestions);
    }
}

}  // namespace

void add_fit_command(CLI::App& app) {
    auto options = std::make_shared<FitOptions>();
    CLI::App* command = app.add_subcommand(
        "fit", "Does a model fit on a device, and how many sequences at what context");
    add_model_option(*command, options->model_path);
    command->add_option("--preset", options->preset,
                        "a known model instead of a file: " + tools::model_preset_names());
    command->add_option("--weights-dtype", options->weights_dtype,
                        "weight type (preset default bf16; with -m, re-estimate the file as if "
                        "quantized): " +
                            tools::storage_type_names(tools::weight_storage_types()));
    command->add_option(
        "--kv-dtype,--kv-cache-dtype", options->kv_dtype,
        "KV cache type (default f16): " + tools::storage_type_names(tools::kv_storage_types()));
    command->add_option("--device", options->device,
                        "device (default cpu: this machine's RAM): " + tools::device_names());
    command->add_option("--mem", options->mem_gib,
                        "memory per device in GiB (overrides --device's)");
    command->add_option("--tp,--tensor-parallel-size", options->n_devices,
                        "devices the model is split over with tensor parallelism (default 1)");
    command->add_option("-c,--context", options->context,
                        "tokens per sequence (default: the model's trained context)");
    command->add_option("--concurrency", options->concurrency,
                        "sequences that must fit at once (default 1)");
    command->add_option("--gpu-memory-utilization", options->memory_utilization,
                        "fraction of each device's memory to use, as vLLM's (default 0.9)");
    command->add_option("--reserve", options->reserve_gib,
                        "GiB per device kept for activations and the runtime (default 1)");
    command->add_flag("--json", options->json, "print one JSON object");
    command->callback([options, command] {
        options->mem_given = command->count("--mem") > 0;
        run_fit(*options);
    });
}

}  // namespace ladder::cli
