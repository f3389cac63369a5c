#include "ladder/tools/kl_divergence.h"

#include <algorithm>
#include <cmath>

#include "ladder/util/error.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

// Probabilities below e^-16 of the reference are left out of the divergence,
// as the 16-bit file cannot tell them apart.
constexpr float kNegligibleLogProb = -16.0f;

MeanAndUncertainty mean_and_uncertainty(double sum, double sum2, int64_t count) {
    if (count < 1) return {};
    const double mean = sum / static_cast<double>(count);
    const double variance = sum2 / static_cast<double>(count) - mean * mean;
    const double uncertainty =
        variance > 0 && count > 10 ? std::sqrt(variance / static_cast<double>(count - 1)) : 0.0;
    return {mean, uncertainty};
}

double covariance(double sum_a, double sum_b, double sum_ab, int64_t count) {
    if (count < 10) return 0.0;
    const auto n = static_cast<double>(count);
    return (sum_ab / n - (sum_a / n) * (sum_b / n)) / (n - 1);
}

// llama-perplexity's interpolated percentile of sorted values.
double percentile(const std::vector<float>& sorted, double fraction) {
    if (fraction <= 0) return sorted.front();
    if (fraction >= 1) return sorted.back();
    double p = fraction * static_cast<double>(sorted.size() - 1);
    const auto ip = static_cast<size_t>(p);
    p -= static_cast<double>(ip);
    return (1 - p) * sorted[ip] + p * sorted[std::min(ip + 1, sorted.size() - 1)];
}

Percentiles percentiles_of(std::vector<float> values, std::span<const double> fractions) {
    Percentiles out;
    if (values.empty()) return out;
    std::sort(values.begin(), values.end());
    for (const double f : fractions) {
        const std::string label = f >= 1.0   ? "max"
                                  : f <= 0.0 ? "min"
                                  : f == 0.5 ? "median"
                                             : fmt::format("{:g}%", 100.0 * f);
        out.emplace_back(label, percentile(values, f));
    }
    return out;
}

}  // namespace

void KlDivergenceAccumulator::add(std::span<const float> logits, const DecodedRow& base,
                                  int32_t target) {
    float max_logit = logits[0];
    size_t top = 0;
    for (size_t i = 1; i < logits.size(); ++i) {
        if (logits[i] > max_logit) {
            max_logit = logits[i];
            top = i;
        }
    }
    double sum_exp = 0.0;
    for (const float logit : logits) sum_exp += std::exp(logit - max_logit);
    const auto log_sum_exp = static_cast<float>(std::log(sum_exp));
    const auto t = static_cast<size_t>(target);

    const float nll = max_logit + log_sum_exp - logits[t];
    const float nll_base = -base.log_prob(target);
    sum_nll_ += nll;
    sum_nll2_ += nll * nll;
    sum_nll_base_ += nll_base;
    sum_nll_base2_ += nll_base * nll_base;
    sum_nll_nll_base_ += nll * nll_base;

    // KL(base || model) = sum_i p_base(i) (log p_base(i) - log p(i)), with
    // log p(i) = logits[i] - (max_logit + log_sum_exp).
    const float log_normalizer = max_logit + log_sum_exp;
    double kld = 0.0;
    size_t top_base = 0;
    float top_base_log_prob = 0.0f;
    for (size_t i = 0; i < logits.size(); ++i) {
        const float log_p_base = base.log_prob(static_cast<int64_t>(i));
        if (i == 0 || log_p_base > top_base_log_prob) {
            top_base_log_prob = log_p_base;
            top_base = i;
        }
        if (log_p_base > kNegligibleLogProb) {
            kld += std::exp(log_p_base) * (log_p_base - logits[i] + log_normalizer);
        }
    }
    sum_kld_ += kld;
    sum_kld2_ += kld * kld;
    ++count_;
    if (top == top_base) ++n_same_top_;

    const float p_diff = std::exp(-nll) - std::exp(-nll_base);
    sum_p_diff_ += p_diff;
    const double p_diff2 = p_diff * p_diff;  // a float product, as llama-perplexity's
    sum_p_diff2_ += p_diff2;
    sum_p_diff4_ += p_diff2 * p_diff2;
    kld_values_.push_back(static_cast<float>(kld));
    p_diff_values_.push_back(p_diff);
}

double KlDivergenceAccumulator::running_perplexity() const {
    return count_ > 0 ? std::exp(sum_nll_ / static_cast<double>(count_)) : 0.0;
}

KlDivergenceResult KlDivergenceAccumulator::result() const {
    KlDivergenceResult r;
    r.n_scored = count_;
    const MeanAndUncertainty log_ppl = mean_and_uncertainty(sum_nll_, sum_nll2_, count_);
    const MeanAndUncertainty log_ppl_base =
        mean_and_uncertainty(sum_nll_base_, sum_nll_base2_, count_);
    r.perplexity = {std::exp(log_ppl.mean), std::exp(log_ppl.mean) * log_ppl.uncertainty};
    r.base_perplexity = {std::exp(log_ppl_base.mean),
                         std::exp(log_ppl_base.mean) * log_ppl_base.uncertainty};
    const double cov = covariance(sum_nll_, sum_nll_base_, sum_nll_nll_base_, count_);
    const double spread = log_ppl.uncertainty * log_ppl_base.uncertainty;
    r.perplexity_correlation = spread > 0 ? cov / spread : 0.0;
    r.log_perplexity_ratio = {
        log_ppl.mean - log_ppl_base.mean,
        std::sqrt(std::max(0.0, log_ppl.uncertainty * log_ppl.uncertainty +
                                    log_ppl_base.uncertainty * log_ppl_base.uncertainty -
                                    2.0 * cov))};
    r.kl_divergence = mean_and_uncertainty(sum_kld_, sum_kld2_, count_);
    r.delta_p = mean_and_uncertainty(sum_p_diff_, sum_p_diff2_, count_);
    const MeanAndUncertainty mse = mean_and_uncertainty(sum_p_diff2_, sum_p_diff4_, count_);
    const double rms = std::sqrt(mse.mean);
    r.rms_delta_p = {rms, rms > 0 ? 0.5 / rms * mse.uncertainty : 0.0};
    const double same =
        count_ > 0 ? static_cast<double>(n_same_top_) / static_cast<double>(count_) : 0.0;
    r.same_top = {
        same, count_ > 1 ? std::sqrt(same * (1 - same) / static_cast<double>(count_ - 1)) : 0.0};
    static constexpr double kKldFractions[] = {1.0, 0.999, 0.99, 0.95,  0.9, 0.5,
                                               0.1, 0.05,  0.01, 0.001, 0.0};
    static constexpr double kDeltaPFractions[] = {1.0,  0.999, 0.99, 0.95, 0.9,   0.75, 0.5,
                                                  0.25, 0.1,   0.05, 0.01, 0.001, 0.0};
    r.kl_divergence_percentiles = percentiles_of(kld_values_, kKldFractions);
    r.delta_p_percentiles = percentiles_of(p_diff_values_, kDeltaPFractions);
    return r;
}

KlDivergenceResult compute_kl_divergence(const engine::ModelBundle& bundle,
                                         const std::string& base_path, util::ThreadPool& pool,
                                         const PerplexityProgress& progress) {
    const double start = util::now_seconds();
    LogitsFileReader base(base_path);
    const int64_t vocab_size = bundle.model->config().vocab_size;
    if (base.vocab_size() != vocab_size) {
        util::fail("'{}' was saved with a vocabulary of {}, this model has {}", base_path,
                   base.vocab_size(), vocab_size);
    }
    const int32_t ctx = base.ctx();
    const int32_t first_scored = first_scored_position(ctx);
    const int64_t words = logits_row_words(vocab_size);
    KlDivergenceAccumulator accumulator;
    std::vector<uint16_t> rows;
    for_each_window(
        bundle, base.tokens(), ctx, base.n_chunks(), pool,
        [&](int32_t chunk, std::span<const int32_t> window, const std::vector<float>& logits) {
            base.read_window(rows);
            for (int32_t j = first_scored; j < ctx - 1; ++j) {
                const auto row = std::span<const uint16_t>(rows).subspan(
                    static_cast<size_t>((j - first_scored) * words), static_cast<size_t>(words));
                accumulator.add({logits.data() + j * vocab_size, static_cast<size_t>(vocab_size)},
                                decode_row(row, vocab_size), window[static_cast<size_t>(j + 1)]);
            }
            if (progress) progress(chunk + 1, base.n_chunks(), accumulator.running_perplexity());
        });
    KlDivergenceResult result = accumulator.result();
    result.ctx = ctx;
    result.n_chunks = base.n_chunks();
    result.seconds = util::now_seconds() - start;
    return result;
}

}  // namespace ladder::tools
