#include "ladder/engine/session.h"

#include <algorithm>
#include <numeric>

#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::engine {

namespace {
constexpr int32_t kBlockSize = 16;

int32_t blocks_for(int32_t n_tokens) { return (n_tokens + kBlockSize - 1) / kBlockSize; }
}  // namespace

Session::Session(model::Model& model, util::ThreadPool& pool, int32_t max_context,
                 int32_t max_batch_tokens)
    : model_(model),
      pool_(pool),
      max_context_(max_context),
      max_batch_tokens_(std::max(1, max_batch_tokens)),
      block_size_(kBlockSize),
      kv_(model.kv_cache_shape(blocks_for(max_context), kBlockSize)) {
    LADDER_CHECK(max_context > 0, "session context must be positive");
    // A private sequence owns the whole pool, in order.
    block_table_.resize(static_cast<size_t>(blocks_for(max_context)));
    std::iota(block_table_.begin(), block_table_.end(), 0);
}

void Session::truncate(int32_t n) {
    if (n >= n_tokens()) return;
    tokens_.resize(static_cast<size_t>(std::max(0, n)));
    n_computed_ = std::min(n_computed_, n_tokens());
}

void Session::add_tokens(std::span<const int32_t> tokens) {
    if (n_tokens() + static_cast<int64_t>(tokens.size()) > max_context_) {
        util::fail("context is full: {} + {} tokens exceed the context of {}", n_tokens(),
                   tokens.size(), max_context_);
    }
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
}

void Session::add_pending(int32_t token) { add_tokens({&token, 1}); }

std::span<const float> Session::append(std::span<const int32_t> tokens) {
    add_tokens(tokens);
    if (n_computed_ == n_tokens()) util::fail("nothing to compute: the token list is empty");
    const auto vocab = static_cast<size_t>(model_.config().vocab_size);
    logits_.resize(vocab);
    compute(n_computed_, n_tokens(), false, logits_.data());
    n_computed_ = n_tokens();
    return {logits_.data(), vocab};
}

void Session::append_scoring_all(std::span<const int32_t> tokens, std::vector<float>& all_logits) {
    if (tokens.empty()) util::fail("nothing to compute: the token list is empty");
    if (n_computed_ != n_tokens()) util::fail("scoring needs every earlier token computed");
    const int32_t begin = n_tokens();
    add_tokens(tokens);
    all_logits.resize(tokens.size() * static_cast<size_t>(model_.config().vocab_size));
    compute(begin, n_tokens(), true, all_logits.data());
    n_computed_ = n_tokens();
}

void Session::compute(int32_t begin, int32_t end, bool all_logits, float* logits_out) {
    const auto vocab = static_cast<int64_t>(model_.config().vocab_size);
    for (int32_t chunk_begin = begin; chunk_begin < end; chunk_begin += max_batch_tokens_) {
        const int32_t chunk_end = std::min(end, chunk_begin + max_batch_tokens_);
        const int32_t n = chunk_end - chunk_begin;
        batch_.clear();
        for (int32_t position = chunk_begin; position < chunk_end; ++position) {
            batch_.tokens.push_back(tokens_[static_cast<size_t>(position)]);
            batch_.positions.push_back(position);
            batch_.slots.push_back(
                static_cast<int64_t>(block_table_[static_cast<size_t>(position / block_size_)]) *
                    block_size_ +
                position % block_size_);
        }
        batch_.sequences.push_back({0, n, chunk_end, block_table_, {}});
        const bool last_chunk = chunk_end == end;
        float* out = logits_out;
        if (all_logits) {
            for (int32_t row = 0; row < n; ++row) batch_.logit_rows.push_back(row);
            out = logits_out + static_cast<int64_t>(chunk_begin - begin) * vocab;
        } else if (last_chunk) {
            batch_.logit_rows.push_back(n - 1);
        }
        const size_t n_logits = batch_.logit_rows.size() * static_cast<size_t>(vocab);
        model_.forward(batch_, kv_, pool_, std::span<float>(out, n_logits));
    }
}

}  // namespace ladder::engine
