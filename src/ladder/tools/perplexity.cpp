#include "ladder/tools/perplexity.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "ladder/engine/session.h"
#include "ladder/tools/logits_file.h"
#include "ladder/util/error.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

// -log softmax(logits)[target], in double so the sum over thousands of
// tokens does not lose digits.
double negative_log_likelihood(const float* logits, int64_t vocab_size, int32_t target) {
    const float max_logit = *std::max_element(logits, logits + vocab_size);
    double sum = 0.0;
    for (int64_t i = 0; i < vocab_size; ++i)
        sum += std::exp(static_cast<double>(logits[i]) - max_logit);
    return std::log(sum) - (static_cast<double>(logits[target]) - max_logit);
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
                                    int32_t ctx, util::ThreadPool& pool,
                                    const PerplexityProgress& progress,
                                    const std::string& save_log_probs_path) {
    const double start = util::now_seconds();
    const tokenizer::Tokenizer& tokenizer = *bundle.tokenizer;
    const bool add_bos =
        tokenizer.vocabulary().add_bos.value_or(false) && tokenizer.vocabulary().bos_id.has_value();
    const std::vector<int32_t> tokens = tokenizer.encode(text, add_bos, false);

    PerplexityResult result;
    result.ctx = ctx;
    result.n_tokens = static_cast<int64_t>(tokens.size());
    result.n_chunks = static_cast<int32_t>(tokens.size() / static_cast<size_t>(ctx));
    if (result.n_chunks == 0) {
        util::fail("the text has {} tokens, fewer than one window of {} (--ctx)", tokens.size(),
                   ctx);
    }

    const int64_t vocab_size = bundle.model->config().vocab_size;
    std::optional<LogitsFileWriter> saved;
    std::vector<uint16_t> rows;
    if (!save_log_probs_path.empty()) {
        saved.emplace(save_log_probs_path, ctx, static_cast<int32_t>(vocab_size), tokens,
                      result.n_chunks);
        rows.resize(
            static_cast<size_t>(scored_rows_per_window(ctx) * logits_row_words(vocab_size)));
    }
    const int32_t first_scored = first_scored_position(ctx);
    double nll_sum = 0.0;
    for_each_window(
        bundle, tokens, ctx, result.n_chunks, pool,
        [&](int32_t chunk, std::span<const int32_t> window, const std::vector<float>& logits) {
            for (int32_t j = first_scored; j < ctx - 1; ++j) {
                const float* position = logits.data() + j * vocab_size;
                const int32_t target = window[static_cast<size_t>(j + 1)];
                nll_sum += negative_log_likelihood(position, vocab_size, target);
                if (saved) {
                    const int64_t words = logits_row_words(vocab_size);
                    encode_log_probs(
                        {position, static_cast<size_t>(vocab_size)}, target,
                        std::span(rows).subspan(static_cast<size_t>((j - first_scored) * words),
                                                static_cast<size_t>(words)));
                }
                ++result.n_scored;
            }
            if (saved) saved->write_rows(rows);
            if (progress) progress(chunk + 1, result.n_chunks, std::exp(nll_sum / result.n_scored));
        });
    if (saved) saved->close();
    result.mean_nll = nll_sum / static_cast<double>(result.n_scored);
    result.perplexity = std::exp(result.mean_nll);
    result.seconds = util::now_seconds() - start;
    return result;
}

}  // namespace ladder::tools
