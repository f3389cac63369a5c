// `ladder perplexity`: perplexity of a model over a text file, comparable with
// llama.cpp's perplexity tool.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

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
    int chunks = 0;  // 0: every window
    bool json = false;
    model::AttentionPath attention = model::kDefaultAttentionPath;
    std::string compare_attention;  // empty: no comparison
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
    bundle.model->set_attention_path(options.attention);
    util::ThreadPool pool(options.n_threads);
    const auto progress = [&](int32_t done, int32_t total, double running) {
        std::fprintf(stderr, "\r[%d/%d] perplexity so far %.4f", done, total, running);
        if (done == total) std::fputc('\n', stderr);
    };
    tools::PerplexityOptions run;
    run.ctx = options.ctx;
    run.max_chunks = options.chunks;
    if (!options.compare_attention.empty()) {
        run.reference_attention = model::parse_attention_path(options.compare_attention);
    }
    const tools::PerplexityResult result =
        tools::compute_perplexity(bundle, text, run, pool, progress);
    const std::optional<tools::DistributionComparison>& comparison = result.comparison;
    if (options.json) {
        nlohmann::json out = {
            {"model", options.model_path.empty() ? resolve_model_path("") : options.model_path},
            {"file", options.file},
            {"ctx", result.ctx},
            {"n_tokens", result.n_tokens},
            {"n_chunks", result.n_chunks},
            {"n_scored", result.n_scored},
            {"perplexity", result.perplexity},
            {"mean_nll", result.mean_nll},
            {"seconds", result.seconds},
            {"attention", model::attention_path_name(options.attention)},
        };
        if (comparison) {
            out["comparison"] = {
                {"reference_attention", model::attention_path_name(comparison->reference)},
                {"reference_perplexity", comparison->reference_perplexity},
                {"mean_kl_divergence", comparison->mean_kl_divergence},
                {"max_kl_divergence", comparison->max_kl_divergence},
                {"top1_agreement", comparison->top1_agreement},
            };
        }
        std::cout << out.dump(2) << '\n';
        return;
    }
    std::printf("perplexity: %.4f over %lld scored tokens (%d windows of %d) in %.1f s\n",
                result.perplexity, static_cast<long long>(result.n_scored), result.n_chunks,
                result.ctx, result.seconds);
    if (comparison) {
        std::printf(
            "against --attention %s: perplexity %.4f (%+.4f%%), mean KL divergence %.3g, max "
            "%.3g, top-1 agreement %.2f%%\n",
            std::string(model::attention_path_name(comparison->reference)).c_str(),
            comparison->reference_perplexity,
            100.0 * (result.perplexity / comparison->reference_perplexity - 1.0),
            comparison->mean_kl_divergence, comparison->max_kl_divergence,
            100.0 * comparison->top1_agreement);
    }
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
    auto options = std::make_shared<PerplexityOptions>();
    CLI::App* command = app.add_subcommand("perplexity", "Perplexity over a text file, comparable with llama.cpp's");
    add_model_option(*command, options->model_path);
    add_threads_option(*command, options->n_threads);
    add_attention_option(*command, options->attention);
    command->add_option("-f,--file", options->file, "text file")->required();
    command->add_option("-c,--ctx", options->ctx, "window size in tokens")
        ->default_val(512)
        ->check(CLI::Range(16, 1 << 20));
    command->add_option("--chunks", options->chunks, "score only the first N windows (0: all)")
        ->default_val(0)
        ->check(CLI::Range(0, 1 << 24));
    command
        ->add_option("--compare-attention", options->compare_attention,
                     "also run every window with these attention kernels (exact or fast) and "
                     "report that run's perplexity, the mean KL divergence of this run's "
                     "next-token distributions from its, and their top-1 agreement")
        ->check(CLI::IsMember({"exact", "fast"}));
    command->add_flag("--json", options->json, "print the result as JSON");
    command->callback([options] { run_perplexity(*options); });
}

}  // namespace ladder::cli
