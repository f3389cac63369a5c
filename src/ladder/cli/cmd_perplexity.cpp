// `ladder perplexity`: perplexity of a model over a text file, comparable with
// llama.cpp's perplexity tool; with --kl-divergence-base it also saves the
// model's log-probabilities, and with --kl-divergence it compares another
// model against a saved file (llama-perplexity's file, either way).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/cli/kv_cache_options.h"
#include "ladder/tools/kl_divergence.h"
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
    bool ctx_given = false;
    std::string kl_divergence_base;
    bool kl_divergence = false;
    int chunks = 0;  // 0: every window
    bool json = false;
    model::AttentionPath attention = model::kDefaultAttentionPath;
    KvCacheTypeFlags kv_cache_types;
    std::string compare_attention;  // empty: no comparison
};

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) util::fail("cannot read '{}'", path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

tools::PerplexityProgress progress_line(const char* what) {
    return [what](int32_t done, int32_t total, double running) {
        std::fprintf(stderr, "\r[%d/%d] %s so far %.4f", done, total, what, running);
        if (done == total) std::fputc('\n', stderr);
    };
}

void run_perplexity(const PerplexityOptions& options, const std::string& model_path) {
    const std::string text = read_text_file(options.file);
    const engine::ModelBundle bundle = engine::load_model_bundle(model_path);
    bundle.model->set_attention_path(options.attention);
    set_kv_cache_types(options.kv_cache_types, *bundle.model);
    util::ThreadPool pool(options.n_threads);
    tools::PerplexityOptions run;
    run.ctx = options.ctx;
    run.max_chunks = options.chunks;
    run.save_log_probs_path = options.kl_divergence_base;
    if (!options.compare_attention.empty()) {
        run.reference_attention = model::parse_attention_path(options.compare_attention);
        // The reference runs as its own command line would: auto types resolved for its path.
        run.reference_kv_cache_types =
            kv_cache_types(options.kv_cache_types, *run.reference_attention);
    }
    const tools::PerplexityResult result =
        tools::compute_perplexity(bundle, text, run, pool, progress_line("perplexity"));
    const std::optional<tools::DistributionComparison>& comparison = result.comparison;
    if (options.json) {
        nlohmann::json out = {
            {"model", model_path},
            {"file", options.file},
            {"ctx", result.ctx},
            {"n_tokens", result.n_tokens},
            {"n_chunks", result.n_chunks},
            {"n_scored", result.n_scored},
            {"perplexity", result.perplexity},
            {"mean_nll", result.mean_nll},
            {"seconds", result.seconds},
            {"attention", model::attention_path_name(options.attention)},
            {"kv_cache_dtype", model::kv_cache_types_name(bundle.model->kv_cache_types())},
        };
        if (!options.kl_divergence_base.empty())
            out["kl_divergence_base"] = options.kl_divergence_base;
        if (comparison) {
            out["comparison"] = {
                {"reference_attention", model::attention_path_name(comparison->reference)},
                {"reference_kv_cache_dtype",
                 model::kv_cache_types_name(*run.reference_kv_cache_types)},
                {"reference_perplexity", comparison->reference_perplexity},
                {"mean_kl_divergence", comparison->mean_kl_divergence},
                {"max_kl_divergence", comparison->max_kl_divergence},
                {"top1_agreement", comparison->top1_agreement},
            };
        }
        std::cout << out.dump(2) << '\n';
        return;
    }
    std::printf(
        "perplexity: %.4f over %lld scored tokens (%d windows of %d, KV cache %s) in %.1f s\n",
        result.perplexity, static_cast<long long>(result.n_scored), result.n_chunks, result.ctx,
        model::kv_cache_types_name(bundle.model->kv_cache_types()).c_str(), result.seconds);
    if (comparison) {
        std::printf(
            "against --attention %s (KV cache %s): perplexity %.4f (%+.4f%%), mean KL "
            "divergence %.3g, max %.3g, top-1 agreement %.2f%%\n",
            std::string(model::attention_path_name(comparison->reference)).c_str(),
            model::kv_cache_types_name(*run.reference_kv_cache_types).c_str(),
            comparison->reference_perplexity,
            100.0 * (result.perplexity / comparison->reference_perplexity - 1.0),
            comparison->mean_kl_divergence, comparison->max_kl_divergence,
            100.0 * comparison->top1_agreement);
    }
    if (!options.kl_divergence_base.empty()) {
        std::printf("saved the log-probabilities to %s\n", options.kl_divergence_base.c_str());
    }
}

nlohmann::json to_json(const tools::MeanAndUncertainty& m) {
    return {{"mean", m.mean}, {"uncertainty", m.uncertainty}};
}

nlohmann::json to_json(const tools::Percentiles& percentiles) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [label, value] : percentiles) out[label] = value;
    return out;
}

void print_kl_divergence(const tools::KlDivergenceResult& r) {
    std::printf("compared %lld positions (%d windows of %d) in %.1f s\n",
                static_cast<long long>(r.n_scored), r.n_chunks, r.ctx, r.seconds);
    std::printf("perplexity:            %.4f ± %.4f  (reference %.4f ± %.4f)\n", r.perplexity.mean,
                r.perplexity.uncertainty, r.base_perplexity.mean, r.base_perplexity.uncertainty);
    std::printf("ln(PPL / PPL(ref)):    %.5f ± %.5f\n", r.log_perplexity_ratio.mean,
                r.log_perplexity_ratio.uncertainty);
    std::printf("mean KL divergence:    %.6f ± %.6f nats\n", r.kl_divergence.mean,
                r.kl_divergence.uncertainty);
    std::printf("top-1 agreement:       %.3f ± %.3f %%\n", 100.0 * r.same_top.mean,
                100.0 * r.same_top.uncertainty);
    std::printf("mean Δp:               %.3f ± %.3f %%\n", 100.0 * r.delta_p.mean,
                100.0 * r.delta_p.uncertainty);
    std::printf("RMS Δp:                %.3f ± %.3f %%\n", 100.0 * r.rms_delta_p.mean,
                100.0 * r.rms_delta_p.uncertainty);
    std::printf("KL divergence:");
    for (const auto& [label, value] : r.kl_divergence_percentiles) {
        std::printf(" %s %.6f", label.c_str(), value);
    }
    std::printf("\nΔp:");
    for (const auto& [label, value] : r.delta_p_percentiles) {
        std::printf(" %s %.3f%%", label.c_str(), 100.0 * value);
    }
    std::printf("\n");
}

void run_kl_divergence(const PerplexityOptions& options, const std::string& model_path) {
    if (options.kl_divergence_base.empty()) {
        util::fail("--kl-divergence compares against a file saved with --kl-divergence-base FILE");
    }
    if (options.ctx_given) {
        const tools::LogitsFileReader saved(options.kl_divergence_base);
        if (saved.ctx() != options.ctx) {
            util::fail("--ctx {} differs from the {} of '{}' (the windows come from the file)",
                       options.ctx, saved.ctx(), options.kl_divergence_base);
        }
    }
    const engine::ModelBundle bundle = engine::load_model_bundle(model_path);
    bundle.model->set_attention_path(options.attention);
    set_kv_cache_types(options.kv_cache_types, *bundle.model);
    util::ThreadPool pool(options.n_threads);
    const tools::KlDivergenceResult r = tools::compute_kl_divergence(
        bundle, options.kl_divergence_base, pool, progress_line("perplexity"));
    if (!options.json) {
        print_kl_divergence(r);
        return;
    }
    const nlohmann::json out = {
        {"model", model_path},
        {"kl_divergence_base", options.kl_divergence_base},
        {"ctx", r.ctx},
        {"n_chunks", r.n_chunks},
        {"n_scored", r.n_scored},
        {"perplexity", to_json(r.perplexity)},
        {"base_perplexity", to_json(r.base_perplexity)},
        {"perplexity_correlation", r.perplexity_correlation},
        {"log_perplexity_ratio", to_json(r.log_perplexity_ratio)},
        {"kl_divergence", to_json(r.kl_divergence)},
        {"kl_divergence_percentiles", to_json(r.kl_divergence_percentiles)},
        {"same_top", to_json(r.same_top)},
        {"delta_p", to_json(r.delta_p)},
        {"rms_delta_p", to_json(r.rms_delta_p)},
        {"delta_p_percentiles", to_json(r.delta_p_percentiles)},
        {"seconds", r.seconds},
    };
    std::cout << out.dump(2) << '\n';
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
    auto options = std::make_shared<PerplexityOptions>();
    CLI::App* command = app.add_subcommand(
        "perplexity",
        "Perplexity over a text file, comparable with llama.cpp's; KL divergence "
        "against a reference model's saved log-probabilities");
    add_model_option(*command, options->model_path);
    add_threads_option(*command, options->n_threads);
    add_attention_option(*command, options->attention);
    add_kv_cache_type_options(*command, options->kv_cache_types);
    command->add_option("-f,--file", options->file, "text file (not with --kl-divergence)");
    CLI::Option* ctx = command->add_option("-c,--ctx", options->ctx, "window size in tokens")
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
    command->add_option("--kl-divergence-base", options->kl_divergence_base,
                        "with -f: also save the model's log-probabilities to FILE; with "
                        "--kl-divergence: the FILE to compare against");
    command->add_flag("--kl-divergence", options->kl_divergence,
                      "compare the model with the log-probabilities in --kl-divergence-base "
                      "(its tokens and windows; no -f)");
    command->add_flag("--json", options->json, "print the result as JSON");
    command->callback([options, ctx] {
        options->ctx_given = ctx->count() > 0;
        const std::string model_path = resolve_model_path(options->model_path);
        if (options->kl_divergence) {
            if (!options->file.empty()) {
                util::fail("--kl-divergence reads its tokens from --kl-divergence-base, not -f");
            }
            run_kl_divergence(*options, model_path);
        } else {
            if (options->file.empty()) util::fail("-f FILE is required (or --kl-divergence)");
            run_perplexity(*options, model_path);
        }
    });
}

}  // namespace ladder::cli
