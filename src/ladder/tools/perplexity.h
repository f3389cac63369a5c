// Perplexity of a model over a text, computed the way llama.cpp's perplexity
// tool does so the two numbers can be compared: windows of ctx tokens, BOS in
// the first slot when the model adds one, only the second half of each window
// scored (every scored token has at least ctx/2 tokens of context). Can also
// run every window a second time with other attention kernels and compare the
// two next-token distributions at every scored position (as llama.cpp's
// --kl-divergence compares two models): how the fast attention path is held
// to the exact one. It can also save the model's log-probabilities at every
// scored position, the reference a quantized model is compared with
// (kl_divergence.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ladder/engine/model_bundle.h"
#include "ladder/model/attention_path.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct PerplexityOptions {
    int32_t ctx = 512;
    int32_t max_chunks = 0;  // windows to score; 0: every whole window of the text
    // Also run with these kernels, the reference the distributions are compared to,
    std::optional<model::AttentionPath> reference_attention;
    // over a cache of these types (unset: the model's).
    std::optional<model::KvCacheTypes> reference_kv_cache_types;
    // Also write the log-probability file (logits_file.h) --kl-divergence
    // compares against; empty: none.
    std::string save_log_probs_path;
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
using PerplexityProgress = std::function<void(int32_t, int32_t, double)>;

// Throws util::InputError when the text is shorter than one window. The
// model runs with its own attention path; a comparison switches it to the
// reference path and back for every step.
PerplexityResult compute_perplexity(const engine::ModelBundle& bundle, const std::string& text,
                                    const PerplexityOptions& options, util::ThreadPool& pool,
                                    const PerplexityProgress& progress);

// The first position of a window of ctx tokens that is scored.
inline int32_t first_scored_position(int32_t ctx) { return ctx / 2; }

// Computes windows [0, n_chunks) of ctx consecutive tokens each, the first
// token of each replaced by BOS when the model adds one, and hands each to
// visit with the logits of all its positions [ctx, vocab_size].
using WindowVisitor = std::function<void(int32_t chunk, std::span<const int32_t> window,
                                         const std::vector<float>& logits)>;
void for_each_window(const engine::ModelBundle& bundle, std::span<const int32_t> tokens,
                     int32_t ctx, int32_t n_chunks, util::ThreadPool& pool,
                     const WindowVisitor& visit);

}  // namespace ladder::tools
