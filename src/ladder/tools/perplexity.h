// Perplexity of a model over a text, computed the way llama.cpp's perplexity
// tool does so the two numbers can be compared: windows of ctx tokens, BOS in
// the first slot when the model adds one, only the second half of each window
// scored (every scored token has at least ctx/2 tokens of context). Can also
// run every window a second time with other attention kernels and compare the
// two next-token distributions at every scored position (as llama.cpp's
// --kl-divergence compares two models): how the fast attention path is held
// to the exact one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ladder/engine/model_bundle.h"
#include "ladder/model/attention_path.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct PerplexityOptions {
    int32_t ctx = 512;
    int32_t max_chunks = 0;  // windows to score; 0: every whole window of the text
    // Also run with these kernels, the reference the distributions are compared to.
    std::optional<model::AttentionPath> reference_attention;
};

// This run's next-token distributions against the reference run's.
struct DistributionComparison {
    model::AttentionPath reference = model::AttentionPath::Exact;
    double reference_perplexity = 0.0;
    double mean_kl_divergence = 0.0;  // KL(reference || this run), nats, over scored positions
    double max_kl_divergence = 0.0;
    double top1_agreement = 0.0;  // positions whose most likely token is the same, fraction
};

struct PerplexityResult {
    int32_t ctx = 0;
    int64_t n_tokens = 0;   // tokens in the text
    int32_t n_chunks = 0;   // whole windows scored
    int64_t n_scored = 0;   // tokens scored
    double perplexity = 0.0;
    double mean_nll = 0.0;  // mean negative log-likelihood, nats
    double seconds = 0.0;
    std::optional<DistributionComparison> comparison;
};

// progress(chunk_done, n_chunks, running_perplexity) after each window.
// Throws util::InputError when the text is shorter than one window. The
// model runs with its own attention path; a comparison switches it to the
// reference path and back for every step.
PerplexityResult compute_perplexity(const engine::ModelBundle& bundle, const std::string& text,
                                    const PerplexityOptions& options, util::ThreadPool& pool,
                                    const std::function<void(int32_t, int32_t, double)>& progress);

}  // namespace ladder::tools
