// Perplexity of a model over a text, computed the way llama.cpp's perplexity
// tool does so the two numbers can be compared: windows of ctx tokens, BOS in
// the first slot when the model adds one, only the second half of each window
// scored (every scored token has at least ctx/2 tokens of context).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ladder/engine/model_bundle.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct PerplexityResult {
    int32_t ctx = 0;
    int64_t n_tokens = 0;   // tokens in the text
    int32_t n_chunks = 0;   // whole windows scored
    int64_t n_scored = 0;   // tokens scored
    double perplexity = 0.0;
    double mean_nll = 0.0;  // mean negative log-likelihood, nats
    double seconds = 0.0;
};

// progress(chunk_done, n_chunks, running_perplexity) after each window.
// Throws util::InputError when the text is shorter than one window.
PerplexityResult compute_perplexity(const engine::ModelBundle& bundle, const std::string& text,
                                    int32_t ctx, util::ThreadPool& pool,
                                    const std::function<void(int32_t, int32_t, double)>& progress);

}  // namespace ladder::tools
