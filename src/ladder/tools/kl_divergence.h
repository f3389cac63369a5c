// How far a model's next-token distributions are from a reference's, as
// llama.cpp's `llama-perplexity --kl-divergence` measures it: over the tokens
// and log-probabilities a reference run saved (logits_file.h), this model's
// perplexity next to the reference's, the mean KL divergence
// KL(reference || model), how often both put the same token first, and Δp,
// the change in the probability of the token that came. This is how the
// quality of a quantization is measured.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ladder/engine/model_bundle.h"
#include "ladder/tools/logits_file.h"
#include "ladder/tools/perplexity.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct MeanAndUncertainty {
    double mean = 0.0;
    double uncertainty = 0.0;  // standard error of the mean
};

// (label, value) pairs, largest first: "max", "99.9%", ..., "median", ..., "min".
using Percentiles = std::vector<std::pair<std::string, double>>;

struct KlDivergenceResult {
    int32_t ctx = 0;
    int32_t n_chunks = 0;
    int64_t n_scored = 0;
    MeanAndUncertainty perplexity;            // this model
    MeanAndUncertainty base_perplexity;       // the reference, from its saved log-probabilities
    double perplexity_correlation = 0.0;      // of ln PPL(Q) and ln PPL(base), over positions
    MeanAndUncertainty log_perplexity_ratio;  // ln(PPL(Q) / PPL(base))
    MeanAndUncertainty kl_divergence;         // nats per position
    Percentiles kl_divergence_percentiles;
    MeanAndUncertainty delta_p;  // p(token) of this model minus the reference's
    MeanAndUncertainty rms_delta_p;
    Percentiles delta_p_percentiles;
    MeanAndUncertainty same_top;  // fraction of positions with the same top token
    double seconds = 0.0;
};

// Sums over scored positions, llama-perplexity's arithmetic position by
// position (so the numbers compare).
class KlDivergenceAccumulator {
public:
    // One position: this model's logits, the reference's saved row, the token
    // that came next.
    void add(std::span<const float> logits, const DecodedRow& base, int32_t target);
    KlDivergenceResult result() const;
    double running_perplexity() const;

private:
    double sum_nll_ = 0.0;
    double sum_nll2_ = 0.0;
    double sum_nll_base_ = 0.0;
    double sum_nll_base2_ = 0.0;
    double sum_nll_nll_base_ = 0.0;
    double sum_kld_ = 0.0;
    double sum_kld2_ = 0.0;
    double sum_p_diff_ = 0.0;
    double sum_p_diff2_ = 0.0;
    double sum_p_diff4_ = 0.0;
    int64_t n_same_top_ = 0;
    int64_t count_ = 0;
    std::vector<float> kld_values_;
    std::vector<float> p_diff_values_;
};

// Runs the model over the windows the reference file holds. Throws
// util::InputError when the file is malformed or its vocabulary or window
// does not fit this model.
KlDivergenceResult compute_kl_divergence(const engine::ModelBundle& bundle,
                                         const std::string& base_path, util::ThreadPool& pool,
                                         const PerplexityProgress& progress);

}  // namespace ladder::tools
