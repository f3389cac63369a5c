// `ladder logprobs`: the model's top next-token log-probabilities at every
// position of a text or token list, as JSON. It is how fidelity against
// another engine is checked (top-1 agreement, KL divergence).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/cli/kv_cache_options.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/engine/sampler.h"
#include "ladder/engine/session.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

struct LogprobsOptions {
    std::string model_path;
    int n_threads = 1;
    std::string prompt;
    std::string tokens_json;
    int top = 20;
    int batch_prefix = -1;  // < 0: every token in one pass
    int step_tokens = 1;    // tokens per step after the batched prefix
    int from = 0;           // the first position reported
    model::AttentionPath attention = model::kDefaultAttentionPath;
    KvCacheTypeFlags kv_cache_types;
};

std::vector<int32_t> parse_token_list(const std::string& text, int32_t vocab_size) {
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    if (!parsed.is_array()) util::fail("--tokens must be a JSON array of token ids");
    std::vector<int32_t> tokens;
    for (const auto& item : parsed) {
        if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() >= vocab_size) {
            util::fail("--tokens: {} is not a token id in [0, {})", item.dump(), vocab_size);
        }
        tokens.push_back(item.get<int32_t>());
    }
    return tokens;
}

void run_logprobs(const LogprobsOptions& options) {
    const engine::ModelBundle bundle = engine::load_model_bundle(resolve_model_path(options.model_path));
    bundle.model->set_attention_path(options.attention);
    set_kv_cache_types(options.kv_cache_types, *bundle.model);
    const int32_t vocab_size = bundle.model->config().vocab_size;
    const std::vector<int32_t> tokens =
        options.tokens_json.empty() ? bundle.tokenizer->encode(options.prompt, true, false)
                                    : parse_token_list(options.tokens_json, vocab_size);
    if (tokens.empty()) util::fail("nothing to score: the token list is empty");
    if (static_cast<int64_t>(tokens.size()) > bundle.model->config().context_length) {
        util::fail("{} tokens exceed the model's context of {}", tokens.size(),
                   bundle.model->config().context_length);
    }
    const auto n_tokens = static_cast<int32_t>(tokens.size());
    if (options.from >= n_tokens) {
        util::fail("--from {} is past the last position ({} tokens)", options.from, n_tokens);
    }
    util::ThreadPool pool(options.n_threads);
    engine::Session session(*bundle.model, pool, n_tokens);
    const auto span_of = [&](int32_t begin, int32_t end) {
        return std::span<const int32_t>(tokens.data() + begin, static_cast<size_t>(end - begin));
    };
    // Rows of logits for positions from..n_tokens - 1, in order.
    std::vector<float> logits;
    const int32_t n_batched =
        options.batch_prefix < 0 ? n_tokens : std::min(options.batch_prefix, n_tokens);
    // The one pass. Its tokens before `from` are computed as a prompt is,
    // without the vocabulary product of every row (Gemma 3's is 63% of its
    // weights, so most of what a row costs).
    const int32_t unreported = std::min(options.from, n_batched);
    if (unreported > 0) session.append(span_of(0, unreported));
    if (n_batched > unreported) session.append_scoring_all(span_of(unreported, n_batched), logits);
    // The rest step_tokens per step: one as generation computes them, or a
    // few as a step verifying drafted tokens does.
    std::vector<float> step_logits;
    for (int32_t i = n_batched; i < n_tokens; i += options.step_tokens) {
        const int32_t n = std::min(options.step_tokens, n_tokens - i);
        session.append_scoring_all(span_of(i, i + n), step_logits);
        const int32_t first_kept = std::max(i, options.from) - i;
        if (first_kept < n) {
            logits.insert(logits.end(), step_logits.begin() + int64_t{first_kept} * vocab_size,
                          step_logits.begin() + int64_t{n} * vocab_size);
        }
    }

    // Positions before `from` are null, so that index i is position i.
    nlohmann::json positions = nlohmann::json::array();
    for (int32_t i = 0; i < n_tokens; ++i) {
        if (i < options.from) {
            positions.push_back(nullptr);
            continue;
        }
        const std::span<const float> row(
            logits.data() + static_cast<size_t>(i - options.from) * static_cast<size_t>(vocab_size),
            static_cast<size_t>(vocab_size));
        nlohmann::json top = nlohmann::json::array();
        for (const auto& [id, logprob] : engine::top_logprobs(row, options.top)) {
            top.push_back({id, logprob});
        }
        positions.push_back(std::move(top));
    }
    const nlohmann::json out = {{"tokens", tokens}, {"top_logprobs", positions}};
    std::cout << out.dump() << '\n';
}

}  // namespace

void add_logprobs_command(CLI::App& app) {
    auto options = std::make_shared<LogprobsOptions>();
    CLI::App* command = app.add_subcommand(
        "logprobs", "Top next-token log-probabilities at every position, as JSON");
    add_model_option(*command, options->model_path);
    add_threads_option(*command, options->n_threads);
    add_attention_option(*command, options->attention);
    add_kv_cache_type_options(*command, options->kv_cache_types);
    auto* prompt = command->add_option("-p,--prompt", options->prompt, "text to score");
    auto* tokens = command->add_option("--tokens", options->tokens_json,
                                       "token ids to score, as a JSON array");
    prompt->excludes(tokens);
    command->add_option("--batch-prefix", options->batch_prefix,
                        "compute the first N tokens in one pass and the rest one per step, as "
                        "generation does (default: all in one pass)")
        ->check(CLI::Range(0, 1 << 24));
    command
        ->add_option("--step-tokens", options->step_tokens,
                     "tokens per step after --batch-prefix (default 1; a few, as a step "
                     "that verifies drafted tokens)")
        ->default_val(1)
        ->check(CLI::Range(1, 1 << 16));
    command
        ->add_option("--from", options->from,
                     "report positions N on; the ones before are null, and their tokens are "
                     "computed as a prompt is, without the vocabulary product of every row "
                     "(default 0: every position)")
        ->default_val(0)
        ->check(CLI::Range(0, 1 << 24));
    command->add_option("--top", options->top, "log-probabilities per position")
        ->default_val(20)
        ->check(CLI::Range(1, 1000));
    command->callback([options, prompt, tokens] {
        if (prompt->count() == 0 && tokens->count() == 0) util::fail("give -p TEXT or --tokens JSON");
        run_logprobs(*options);
    });
}

}  // namespace ladder::cli
