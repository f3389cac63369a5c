#include "ladder/tools/perplexity.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ladder/engine/session.h"
#include "ladder/util/error.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

// -log softmax(logits)[target], in double so the sum over thousands of
// tokens does not lose digits.
double negative_log_likelihood(const float* logits, int64_t vocab_size, int32_t target) {
    const float max_logit = *std::max_element(logits, logits + vocab_size);
    double sum = 0.0;
    for (int64_t i = 0; i < vocab_size; ++i) sum += std::exp(static_cast<double>(logits[i]) - max_logit);
    return std::log(sum) - (static_cast<double>(logits[target]) - max_logit);
}

}  // namespace

PerplexityResult compute_perplexity(const engine::ModelBundle& bundle, const std::string& text,
                                    int32_t ctx, util::ThreadPool& pool,
                                    const std::function<void(int32_t, int32_t, double)>& progress) {
    const double start = util::now_seconds();
    if (ctx > bundle.model->config().context_length) {
        util::fail("--ctx {} is larger than the model's context of {}", ctx,
                   bundle.model->config().context_length);
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

    engine::Session session(*bundle.model, pool, ctx);
    const int64_t vocab_size = bundle.model->config().vocab_size;
    const int32_t first_scored = ctx / 2;
    std::vector<float> logits;
    std::vector<int32_t> window(static_cast<size_t>(ctx));
    double nll_sum = 0.0;
    for (int32_t chunk = 0; chunk < result.n_chunks; ++chunk) {
        std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(chunk) * ctx, ctx, window.begin());
        if (add_bos) window[0] = *tokenizer.vocabulary().bos_id;
        session.reset();
        session.append_scoring_all(window, logits);
        for (int32_t j = first_scored; j < ctx - 1; ++j) {
            nll_sum += negative_log_likelihood(logits.data() + j * vocab_size, vocab_size,
                                               window[static_cast<size_t>(j + 1)]);
            ++result.n_scored;
        }
        if (progress) progress(chunk + 1, result.n_chunks, std::exp(nll_sum / result.n_scored));
    }
    result.mean_nll = nll_sum / static_cast<double>(result.n_scored);
    result.perplexity = std::exp(result.mean_nll);
    result.seconds = util::now_seconds() - start;
    return result;
}

}  // namespace ladder::tools
