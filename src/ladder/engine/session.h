// One sequence computed directly on the model, without the scheduler: what
// `ladder run`, `ladder chat` and `ladder perplexity` need. Its KV cache is
// the paged cache with a block table of its own, so the forward pass is the
// same one the serving engine drives.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ladder/model/batch.h"
#include "ladder/model/kv_cache_storage.h"
#include "ladder/model/model.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::engine {

class Session {
public:
    // max_context: the most tokens the sequence may hold (sizes its KV cache).
    // max_batch_tokens: a long append is computed in chunks of this many.
    Session(model::Model& model, util::ThreadPool& pool, int32_t max_context,
            int32_t max_batch_tokens = 512);

    // Adds tokens and computes every token not yet computed (earlier pending
    // ones included); returns the logits of the last one [vocab_size]. Throws
    // util::InputError when the context is full.
    std::span<const float> append(std::span<const int32_t> tokens);
    // Adds a token without computing it yet: the next append() computes it
    // (the last sampled token of a reply needs no forward pass of its own).
    void add_pending(int32_t token);
    // As append, but returns logits for every appended token [n, vocab_size]
    // into all_logits (perplexity scoring).
    void append_scoring_all(std::span<const int32_t> tokens, std::vector<float>& all_logits);

    // Forgets the sequence (keeps the memory).
    void reset() {
        tokens_.clear();
        n_computed_ = 0;
    }
    // Keeps the first n tokens (their KV stays valid) and drops the rest.
    void truncate(int32_t n);

    const std::vector<int32_t>& tokens() const { return tokens_; }
    int32_t n_tokens() const { return static_cast<int32_t>(tokens_.size()); }
    int32_t max_context() const { return max_context_; }

private:
    void add_tokens(std::span<const int32_t> tokens);
    // Computes tokens [begin, end) of tokens_, asking logits for the rows the
    // caller wants: all of them, or only the last.
    void compute(int32_t begin, int32_t end, bool all_logits, float* logits_out);

    model::Model& model_;
    util::ThreadPool& pool_;
    int32_t max_context_;
    int32_t max_batch_tokens_;
    int32_t block_size_ = 16;
    model::KvCacheStorage kv_;
    std::vector<int32_t> block_table_;
    std::vector<int32_t> tokens_;
    int32_t n_computed_ = 0;  // tokens whose K/V are in the cache
    model::Batch batch_;
    std::vector<float> logits_;
};

}  // namespace ladder::engine
