#include "ladder/tools/perplexity.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "ladder/engine/session.h"
#include "ladder/tools/logits_file.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

// Scored rows computed per step: their logits ([rows, vocab_size], 64 MiB
// for a 262k vocabulary) are scored and dropped before the next rows. Rows
// give the same bits in any batch, so the split does not change the result.
constexpr int32_t kScoredRowsPerStep = 64;

// log sum exp of a row of logits, in double so sums over a large vocabulary
// and thousands of tokens do not lose digits.
struct LogSoftmax {
    float max_logit;
    double log_sum;  // log sum exp(logit - max_logit)

    explicit LogSoftmax(const float* logits, int64_t vocab_size)
        : max_logit(*std::max_element(logits, logits + vocab_size)) {
        double sum = 0.0;
        for (int64_t i = 0; i < vocab_size; ++i) {
            sum += std::exp(static_cast<double>(logits[i]) - max_logit);
        }
        log_sum = std::log(sum);
    }

    double log_probability(float logit) const {
        return static_cast<double>(logit) - max_logit - log_sum;
    }
};

// What one scored position contributes.
struct PositionScore {
    double nll = 0.0;
    double reference_nll = 0.0;
    double kl_divergence = 0.0;
    bool top1_agrees = false;
};

PositionScore score_position(const float* logits, const float* reference, int64_t vocab_size,
                             int32_t target) {
    const LogSoftmax ours(logits, vocab_size);
    PositionScore score;
    score.nll = -ours.log_probability(logits[target]);
    if (reference == nullptr) return score;
    const LogSoftmax theirs(reference, vocab_size);
    score.reference_nll = -theirs.log_probability(reference[target]);
    double kl = 0.0;
    for (int64_t i = 0; i < vocab_size; ++i) {
        const double log_p = theirs.log_probability(reference[i]);
        kl += std::exp(log_p) * (log_p - ours.log_probability(logits[i]));
    }
    score.kl_divergence = std::max(0.0, kl);
    score.top1_agrees = std::max_element(logits, logits + vocab_size) - logits ==
                        std::max_element(reference, reference + vocab_size) - reference;
    return score;
}

}  // namespace

void for_each_window(const engine::ModelBundle& bundle, std::span<const int32_t> tokens,
                     int32_t ctx, int32_t n_chunks, util::ThreadPool& pool,
                     const WindowVisitor& visit) {
    if (ctx > bundle.model->config().context_length) {
        util::fail("a window of {} tokens is larger than the model's context of {}", ctx,
                   bundle.model->config().context_length);
    }
    const tokenizer::Tokenizer& tokenizer = *bundle.tokenizer;
    const bool add_bos =
        tokenizer.vocabulary().add_bos.value_or(false) && tokenizer.vocabulary().bos_id.has_value();
    engine::Session session(*bundle.model, pool, ctx);
    std::vector<float> logits;
    std::vector<int32_t> window(static_cast<size_t>(ctx));
    for (int32_t chunk = 0; chunk < n_chunks; ++chunk) {
        std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(chunk) * ctx, ctx, window.begin());
        if (add_bos) window[0] = *tokenizer.vocabulary().bos_id;
        session.reset();
        session.append_scoring_all(window, logits);
        visit(chunk, window, logits);
    }
}

PerplexityResult compute_perplexity(const engine::ModelBundle& bundle, const std::string& text,
                                    const PerplexityOptions& options, util::ThreadPool& pool,
                                    const PerplexityProgress& progress) {
    const double start = util::now_seconds();
    const int32_t ctx = options.ctx;
    model::Model& model = *bundle.model;
    if (ctx > model.config().context_length) {
        util::fail("--ctx {} is larger than the model's context of {}", ctx,
                   model.config().context_length);
    }
    const tokenizer::Tokenizer& tokenizer = *bundle.tokenizer;
    const bool add_bos = tokenizer.vocabulary().add_bos.value_or(false) &&
                         tokenizer.vocabulary().bos_id.has_value();
    const std::vector<int32_t> tokens = tokenizer.encode(text, add_bos, false);

    PerplexityResult result;
    result.ctx = ctx;
    result.n_tokens = static_cast<int64_t>(tokens.size());
    result.n_chunks = static_cast<int32_t>(tokens.size() / static_cast<size_t>(ctx));
    if (result.n_chunks == 0) {
        util::fail("the text has {} tokens, fewer than one window of {} (--ctx)", tokens.size(), ctx);
    }
    if (options.max_chunks > 0) result.n_chunks = std::min(result.n_chunks, options.max_chunks);

    const model::AttentionPath own_path = model.attention_path();
    engine::Session session(model, pool, ctx);
    std::unique_ptr<engine::Session> reference;
    if (options.reference_attention) {
        // The reference session's cache takes its types when it is made.
        const model::KvCacheTypes own_types = model.kv_cache_types();
        model.set_kv_cache_types(options.reference_kv_cache_types.value_or(own_types));
        reference = std::make_unique<engine::Session>(model, pool, ctx);
        model.set_kv_cache_types(own_types);
    }
    // Runs one step of a session on its own attention path.
    const auto on_path = [&](model::AttentionPath path, const auto& step) {
        model.set_attention_path(path);
        step();
        model.set_attention_path(own_path);
    };

    const int64_t vocab_size = model.config().vocab_size;
    const int32_t first_scored = first_scored_position(ctx);
    std::optional<LogitsFileWriter> saved;
    std::vector<uint16_t> saved_rows;
    const int64_t row_words = logits_row_words(vocab_size);
    if (!options.save_log_probs_path.empty()) {
        saved.emplace(options.save_log_probs_path, ctx, static_cast<int32_t>(vocab_size), tokens,
                      result.n_chunks);
        saved_rows.resize(static_cast<size_t>(scored_rows_per_window(ctx) * row_words));
    }
    std::vector<float> logits;
    std::vector<float> reference_logits;
    std::vector<PositionScore> scores;
    std::vector<int32_t> window(static_cast<size_t>(ctx));
    double nll_sum = 0.0;
    double reference_nll_sum = 0.0;
    double kl_sum = 0.0;
    double kl_max = 0.0;
    int64_t n_top1_agree = 0;
    for (int32_t chunk = 0; chunk < result.n_chunks; ++chunk) {
        std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(chunk) * ctx, ctx, window.begin());
        if (add_bos) window[0] = *tokenizer.vocabulary().bos_id;
        const std::span<const int32_t> context(window.data(), static_cast<size_t>(first_scored));
        session.reset();
        session.append(context);
        if (reference) {
            reference->reset();
            on_path(*options.reference_attention, [&] { reference->append(context); });
        }
        // Row j's logits predict token j + 1: rows first_scored .. ctx - 2.
        for (int32_t begin = first_scored; begin < ctx - 1; begin += kScoredRowsPerStep) {
            const int32_t end = std::min(ctx - 1, begin + kScoredRowsPerStep);
            const std::span<const int32_t> rows(window.data() + begin,
                                                static_cast<size_t>(end - begin));
            session.append_scoring_all(rows, logits);
            if (reference) {
                on_path(*options.reference_attention,
                        [&] { reference->append_scoring_all(rows, reference_logits); });
            }
            scores.assign(static_cast<size_t>(end - begin), {});
            pool.parallel_for(end - begin, [&](int64_t i) {
                scores[static_cast<size_t>(i)] = score_position(
                    logits.data() + i * vocab_size,
                    reference ? reference_logits.data() + i * vocab_size : nullptr, vocab_size,
                    window[static_cast<size_t>(begin + i + 1)]);
            });
            if (saved) {
                for (int32_t i = 0; i < end - begin; ++i) {
                    encode_log_probs(
                        {logits.data() + i * vocab_size, static_cast<size_t>(vocab_size)},
                        window[static_cast<size_t>(begin + i + 1)],
                        std::span(saved_rows)
                            .subspan(static_cast<size_t>((begin + i - first_scored) * row_words),
                                     static_cast<size_t>(row_words)));
                }
            }
            // Summed in position order, whichever thread scored them.
            for (const PositionScore& score : scores) {
                nll_sum += score.nll;
                reference_nll_sum += score.reference_nll;
                kl_sum += score.kl_divergence;
                kl_max = std::max(kl_max, score.kl_divergence);
                n_top1_agree += score.top1_agrees;
                ++result.n_scored;
            }
        }
        if (saved) saved->write_rows(saved_rows);
        if (progress) progress(chunk + 1, result.n_chunks, std::exp(nll_sum / result.n_scored));
    }
    if (saved) saved->close();
    const auto n_scored = static_cast<double>(result.n_scored);
    result.mean_nll = nll_sum / n_scored;
    result.perplexity = std::exp(result.mean_nll);
    if (reference) {
        DistributionComparison& comparison = result.comparison.emplace();
        comparison.reference = *options.reference_attention;
        comparison.reference_perplexity = std::exp(reference_nll_sum / n_scored);
        comparison.mean_kl_divergence = kl_sum / n_scored;
        comparison.max_kl_divergence = kl_max;
        comparison.top1_agreement = static_cast<double>(n_top1_agree) / n_scored;
    }
    result.seconds = util::now_seconds() - start;
    return result;
}

}  // namespace ladder::tools
