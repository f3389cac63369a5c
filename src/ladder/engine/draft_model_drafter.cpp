#include "ladder/engine/draft_model_drafter.h"

#include <algorithm>

#include "ladder/engine/position_sampling.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace ladder::engine {

namespace {

// The draft must speak the target's tokens: the same ids for the same pieces.
void check_same_vocabulary(const std::string& path, const tokenizer::Tokenizer& draft,
                           const tokenizer::Tokenizer& target) {
    const std::vector<std::string>& theirs = draft.vocabulary().tokens;
    const std::vector<std::string>& ours = target.vocabulary().tokens;
    if (theirs.size() != ours.size()) {
        util::fail(
            "--speculative-config: the draft model {} has {} tokens, the target {}: a "
            "draft needs the target's vocabulary",
            path, theirs.size(), ours.size());
    }
    for (size_t id = 0; id < ours.size(); ++id) {
        if (theirs[id] != ours[id]) {
            util::fail(
                "--speculative-config: the draft model {} has another vocabulary: token "
                "{} is '{}' there and '{}' in the target",
                path, id, theirs[id], ours[id]);
        }
    }
}

}  // namespace

DraftModelDrafter::DraftModelDrafter(const std::string& path, const model::Model& target,
                                     const tokenizer::Tokenizer& target_tokenizer,
                                     util::ThreadPool& pool, const KvCachePlan& plan,
                                     int32_t max_num_batched_tokens)
    : bundle_(load_model_bundle(path)),
      pool_(pool),
      max_num_batched_tokens_(max_num_batched_tokens),
      max_context_(std::min(bundle_.model->config().context_length, plan.max_model_len)),
      block_pool_(plan.n_blocks, plan.block_size),
      kv_(bundle_.model->kv_cache_shape(plan.n_blocks, plan.block_size)) {
    check_same_vocabulary(path, *bundle_.tokenizer, target_tokenizer);
    if (bundle_.model->config().vocab_size != target.config().vocab_size) {
        util::fail(
            "--speculative-config: the draft model {} has {} logits per token, the target {}", path,
            bundle_.model->config().vocab_size, target.config().vocab_size);
    }
}

void DraftModelDrafter::rewind(DraftSequence& state, const Sequence& sequence) {
    // The last token is always computed again: its row gives the first draft.
    const size_t n = std::min(state.tokens.size(), sequence.tokens.size() - 1);
    const auto shared = static_cast<size_t>(
        std::mismatch(state.tokens.begin(), state.tokens.begin() + static_cast<std::ptrdiff_t>(n),
                      sequence.tokens.begin())
            .first -
        state.tokens.begin());
    state.tokens.resize(shared);
    state.blocks.shrink_to(state.n_computed(), block_pool_);
}

void DraftModelDrafter::add_rows(Drafting& drafting, int32_t n, bool want_logits) {
    const Sequence& sequence = *drafting.sequence;
    DraftSequence& state = *drafting.state;
    const int32_t first_row = batch_.n_tokens();
    const int32_t end = state.n_computed() + n;
    for (int32_t position = state.n_computed(); position < end; ++position) {
        batch_.tokens.push_back(sequence.tokens[static_cast<size_t>(position)]);
        batch_.positions.push_back(position);
        batch_.slots.push_back(state.blocks.slot(position));
    }
    batch_.sequences.push_back({first_row, n, end, state.blocks.blocks(), {}});
    drafting.n_rows = n;
    drafting.has_logits = want_logits;
    if (want_logits) {
        batch_.logit_rows.push_back(first_row + n - 1);
        logit_owner_.push_back(static_cast<size_t>(&drafting - drafting_.data()));
    }
}

void DraftModelDrafter::run_batch() {
    const auto vocab = static_cast<size_t>(bundle_.model->config().vocab_size);
    const size_t n_logits = batch_.logit_rows.size() * vocab;
    if (logits_.size() < n_logits) logits_.resize(n_logits);
    StepShape shape;
    shape.n_rows = batch_.n_tokens();
    for (const int32_t position : batch_.positions) shape.n_context += position + 1;
    const double start = util::now_seconds();
    bundle_.model->forward(batch_, kv_, pool_, std::span<float>(logits_.data(), n_logits));
    cost_.observe(shape, util::now_seconds() - start);
    for (Drafting& d : drafting_) {
        const std::vector<TokenId>& tokens = d.sequence->tokens;
        const auto first = tokens.begin() + d.state->n_computed();
        d.state->tokens.insert(d.state->tokens.end(), first, first + d.n_rows);
        d.n_rows = 0;
    }
    for (size_t i = 0; i < batch_.logit_rows.size(); ++i) {
        draft_from(drafting_[logit_owner_[i]], std::span<float>(logits_.data() + i * vocab, vocab));
    }
}

void DraftModelDrafter::draft_from(Drafting& drafting, std::span<float> row) {
    Sequence& sequence = *drafting.sequence;
    DraftProposal& draft = sequence.draft;
    TokenId token = 0;
    if (sequence.sampler.params().temperature == 0.0f) {
        token = sample_next_token(sequence, row);  // the draft's argmax: a point mass
    } else {
        // The draft's own distribution q, shaped by the request's sampler
        // chain as the target's p will be, and its own draw from it.
        const std::span<const TokenProbability> q = next_token_distribution(sequence, row);
        token =
            draw_from(q, sequence.sampler.uniform(sequence.n_tokens(), DrawPurpose::DraftProposal));
        std::vector<TokenProbability>& sorted =
            draft.distributions.emplace_back(q.begin(), q.end());
        std::sort(sorted.begin(), sorted.end(),
                  [](const TokenProbability& a, const TokenProbability& b) { return a.id < b.id; });
    }
    if (sequence.constraint) {
        if (!sequence.constraint->accept(token)) {
            if (!draft.distributions.empty() && draft.distributions.size() > draft.tokens.size()) {
                draft.distributions.pop_back();
            }
            drafting.done = true;
            return;
        }
        ++drafting.n_constrained;
    }
    draft.tokens.push_back(token);
    // The next draft position's history and index include this one.
    sequence.tokens.push_back(token);
    drafting.done = draft.size() >= drafting.max_tokens;
}

void DraftModelDrafter::follow_prompts(std::span<const PromptChunk> chunks) {
    drafting_.clear();
    drafting_.reserve(chunks.size());  // add_rows keeps pointers into it
    batch_.clear();
    logit_owner_.clear();
    int32_t budget = max_num_batched_tokens_;
    for (const PromptChunk& chunk : chunks) {
        Sequence& sequence = *chunk.sequence;
        auto [it, added] = sequences_.try_emplace(sequence.id, block_pool_.block_size());
        DraftSequence& state = it->second;
        rewind(state, sequence);
        // To the end of the target's chunk (a prefix-cache hit is the
        // draft's to compute too), short of the sequence's last token, which
        // drafting computes again for its logits.
        const int32_t end = std::min(sequence.n_computed + chunk.n_rows, sequence.n_tokens() - 1);
        const int32_t n = std::min(end - state.n_computed(), budget);
        if (n <= 0 || end > max_context_ ||
            !state.blocks.grow_to(state.n_computed() + n, block_pool_)) {
            continue;
        }
        drafting_.push_back({&sequence, &state, 0});
        add_rows(drafting_.back(), n, false);
        budget -= n;
    }
    if (!batch_.tokens.empty()) run_batch();
    batch_.clear();
}

void DraftModelDrafter::propose(std::span<const DraftRequest> requests) {
    drafting_.clear();
    drafting_.reserve(requests.size());  // add_rows keeps pointers into it
    for (const DraftRequest& request : requests) {
        auto [it, added] = sequences_.try_emplace(request.sequence->id, block_pool_.block_size());
        rewind(it->second, *request.sequence);
        drafting_.push_back({request.sequence, &it->second, request.max_tokens});
    }
    // First pass: catch each sequence's draft KV up with its tokens (a new
    // sequence computes its prompt) and draw the first draft from the last.
    batch_.clear();
    logit_owner_.clear();
    int32_t budget = max_num_batched_tokens_;
    for (Drafting& d : drafting_) {
        const Sequence& sequence = *d.sequence;
        const int32_t n_missing = sequence.n_tokens() - d.state->n_computed();
        const int32_t n = std::min(n_missing, budget);
        // Room for the catch-up and the drafts this pass will compute; a
        // sequence past the draft's context, or short of blocks, drafts nothing.
        const int32_t n_positions = sequence.n_tokens() + d.max_tokens - 1;
        if (n <= 0 || n_positions > max_context_ ||
            !d.state->blocks.grow_to(n_positions, block_pool_)) {
            d.done = true;
            continue;
        }
        add_rows(d, n, n == n_missing);
        d.done = n != n_missing;  // still catching up: no drafts this step
        budget -= n;
    }
    const auto n_before = [](const Drafting& d) {
        return d.sequence->n_tokens() - d.sequence->draft.size();
    };
    // Each further pass computes every sequence's last draft and draws the next.
    while (!batch_.tokens.empty()) {
        run_batch();
        batch_.clear();
        logit_owner_.clear();
        for (Drafting& d : drafting_) {
            if (!d.done) add_rows(d, 1, true);
        }
    }
    for (Drafting& d : drafting_) {
        Sequence& sequence = *d.sequence;
        sequence.tokens.resize(static_cast<size_t>(n_before(d)));
        if (sequence.constraint && d.n_constrained > 0)
            sequence.constraint->rollback(d.n_constrained);
        d.state->blocks.shrink_to(d.state->n_computed(), block_pool_);
    }
}

void DraftModelDrafter::on_released(const Sequence& sequence, bool finished) {
    (void)finished;
    const auto it = sequences_.find(sequence.id);
    if (it == sequences_.end()) return;
    it->second.blocks.release_all(block_pool_);
    sequences_.erase(it);
}

}  // namespace ladder::engine
