// `ladder quantize IN OUT TYPE`: a model file rewritten with its weights in
// another type, byte for byte what llama-quantize writes. A progress bar on a
// terminal while it runs; the sizes, bits per weight and time at the end.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "ladder/cli/commands.h"
#include "ladder/tools/quantize_model.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace ladder::cli {

namespace {

struct QuantizeCommandOptions {
    std::string input;
    std::string output;
    std::string type;
    std::string output_tensor_type;
    std::string token_embedding_type;
    bool allow_requantize = false;
    bool pure = false;
    bool leave_output_tensor = false;
    int n_threads = 1;
};

std::string type_names() {
    std::string names;
    for (const tools::QuantizeType& type : tools::quantize_types()) {
        names += names.empty() ? "" : ", ";
        names += type.name;
    }
    return names;
}

std::optional<tensor::DType> parse_tensor_type(const std::string& flag, const std::string& name) {
    if (name.empty()) return std::nullopt;
    const auto dtype = tools::find_tensor_type(name);
    if (!dtype) {
        util::fail(
            "{} '{}' is not a type ladder writes (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, "
            "Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)",
            flag, name);
    }
    return dtype;
}

// A bar that rewrites itself on a terminal; nothing into a pipe or file,
// where the summary at the end says it all.
class QuantizeProgressBar {
public:
    QuantizeProgressBar() : enabled_(isatty(STDERR_FILENO) != 0) {}

    void update(const tools::QuantizeProgress& p) {
        if (!enabled_) return;
        const double now = util::now_seconds();
        const bool last = p.n_tensors_done == p.n_tensors;
        if (!last && now - last_print_s_ < 0.1) return;
        last_print_s_ = now;
        constexpr int kWidth = 30;
        const double fraction = p.n_elements == 0 ? 1.0
                                                  : static_cast<double>(p.n_elements_done) /
                                                        static_cast<double>(p.n_elements);
        const int filled = static_cast<int>(fraction * kWidth);
        fmt::print(stderr, "\r\033[K[{}{}] {:3.0f}% {}/{} {}", std::string(filled, '#'),
                   std::string(kWidth - filled, '.'), 100.0 * fraction, p.n_tensors_done,
                   p.n_tensors, p.tensor);
        if (last) fmt::print(stderr, "\r\033[K");
        std::fflush(stderr);
    }

    // Clears the bar so a warning gets a line of its own.
    void interrupt() {
        if (enabled_) fmt::print(stderr, "\r\033[K");
    }

private:
    bool enabled_;
    double last_print_s_ = -1.0;
};

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

void run_quantize(const QuantizeCommandOptions& options) {
    const auto type = tools::find_quantize_type(options.type);
    if (!type) util::fail("unknown type '{}' (one of {})", options.type, type_names());
    tools::QuantizeOptions quantize{
        .type = *type,
        .output_tensor_type = parse_tensor_type("--output-tensor-type", options.output_tensor_type),
        .token_embedding_type =
            parse_tensor_type("--token-embedding-type", options.token_embedding_type),
        .allow_requantize = options.allow_requantize,
        .pure = options.pure,
        .leave_output_tensor = options.leave_output_tensor,
    };
    if (!std::filesystem::exists(options.input)) {
        util::fail("model file '{}' does not exist", options.input);
    }
    util::ThreadPool pool(options.n_threads);
    QuantizeProgressBar bar;
    const tools::QuantizeCallbacks callbacks{
        .warn =
            [&](const std::string& line) {
                bar.interrupt();
                fmt::print(stderr, "ladder: warning: {}\n", line);
            },
        .progress = [&](const tools::QuantizeProgress& p) { bar.update(p); },
    };
    const tools::QuantizeSummary s =
        tools::quantize_model(options.input, options.output, quantize, pool, callbacks);
    fmt::print("quantized {} -> {} as {} in {:.2f} s ({} threads)\n", options.input, options.output,
               type->name, s.seconds, options.n_threads);
    fmt::print("  tensors: {} ({} converted, {} fell back to another type)\n", s.n_tensors,
               s.n_converted, s.fallbacks.size());
    fmt::print("  weights: {:.2f} MiB ({:.2f} bpw) -> {:.2f} MiB ({:.2f} bpw)\n",
               mib(s.input_tensor_bytes), s.input_bits_per_weight(), mib(s.output_tensor_bytes),
               s.output_bits_per_weight());
    fmt::print("  file:    {:.2f} MiB -> {:.2f} MiB\n", mib(s.input_file_bytes),
               mib(s.output_file_bytes));
    for (const std::string& line : s.fallbacks) fmt::print(stderr, "ladder: warning: {}\n", line);
}

}  // namespace

void add_quantize_command(CLI::App& app) {
    auto options = std::make_shared<QuantizeCommandOptions>();
    CLI::App* command = app.add_subcommand(
        "quantize", "Rewrite a model in another weight type, byte-identical to llama-quantize");
    command
        ->add_option("input", options->input,
                     "GGUF model to read (F32, F16, BF16, or quantized "
                     "with --allow-requantize)")
        ->required();
    command->add_option("output", options->output, "GGUF file to write")->required();
    command->add_option("type", options->type, "target type: " + type_names())->required();
    command->add_flag("--allow-requantize", options->allow_requantize,
                      "allow converting tensors that are already quantized (lower quality than "
                      "quantizing from 16 or 32 bits)");
    command->add_option("--output-tensor-type", options->output_tensor_type,
                        "type of output.weight (of token_embd.weight too when they are shared)");
    command->add_option("--token-embedding-type", options->token_embedding_type,
                        "type of token_embd.weight");
    command->add_flag("--pure", options->pure,
                      "no mixes: every quantizable tensor in the type (rows permitting)");
    command->add_flag("--leave-output-tensor", options->leave_output_tensor,
                      "keep output.weight in its input type");
    add_threads_option(*command, options->n_threads);
    command->callback([options] { run_quantize(*options); });
}

}  // namespace ladder::cli
