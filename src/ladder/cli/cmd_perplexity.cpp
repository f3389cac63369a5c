// `ladder perplexity`: perplexity of a model over a text file, comparable with
// llama.cpp's perplexity tool.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/tools/perplexity.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

struct PerplexityOptions {
    std::string model_path;
    int n_threads = 1;
    std::string file;
    int ctx = 512;
    bool json = false;
};

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) util::fail("cannot read '{}'", path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void run_perplexity(const PerplexityOptions& options) {
    const std::string text = read_text_file(options.file);
    const engine::ModelBundle bundle = engine::load_model_bundle(resolve_model_path(options.model_path));
    util::ThreadPool pool(options.n_threads);
    const auto progress = [&](int32_t done, int32_t total, double running) {
        std::fprintf(stderr, "\r[%d/%d] perplexity so far %.4f", done, total, running);
        if (done == total) std::fputc('\n', stderr);
    };
    const tools::PerplexityResult result =
        tools::compute_perplexity(bundle, text, options.ctx, pool, progress);
    if (options.json) {
        const nlohmann::json out = {
            {"model", options.model_path.empty() ? resolve_model_path("") : options.model_path},
            {"file", options.file},
            {"ctx", result.ctx},
            {"n_tokens", result.n_tokens},
            {"n_chunks", result.n_chunks},
            {"n_scored", result.n_scored},
            {"perplexity", result.perplexity},
            {"mean_nll", result.mean_nll},
            {"seconds", result.seconds},
        };
        std::cout << out.dump(2) << '\n';
    } else {
        std::printf("perplexity: %.4f over %lld scored tokens (%d windows of %d) in %.1f s\n",
                    result.perplexity, static_cast<long long>(result.n_scored), result.n_chunks,
                    result.ctx, result.seconds);
    }
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
    auto options = std::make_shared<PerplexityOptions>();
    CLI::App* command = app.add_subcommand("perplexity", "Perplexity over a text file, comparable with llama.cpp's");
    add_model_option(*command, options->model_path);
    add_threads_option(*command, options->n_threads);
    command->add_option("-f,--file", options->file, "text file")->required();
    command->add_option("-c,--ctx", options->ctx, "window size in tokens")
        ->default_val(512)
        ->check(CLI::Range(16, 1 << 20));
    command->add_flag("--json", options->json, "print the result as JSON");
    command->callback([options] { run_perplexity(*options); });
}

}  // namespace ladder::cli
