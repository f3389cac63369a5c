// Drafts with a second model that shares the target's vocabulary (compared
// token by token at load): a smaller or more coarsely quantized model whose
// steps cost less than the target's. It runs on the same thread pool with KV
// blocks of its own, which follow the target's: it computes a prompt in the
// steps the target does; before drafting, a sequence's draft KV is cut back
// to the tokens it shares with the sequence (rejected drafts, and drafts
// never verified, go) and caught up with the rest; it is freed when the
// sequence is preempted or ends.
// Proposals carry the draft's distributions, so sampled requests are
// verified by rejection sampling.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ladder/engine/drafter.h"
#include "ladder/engine/engine_config.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/kv/block_pool.h"
#include "ladder/kv/block_table.h"
#include "ladder/model/batch.h"
#include "ladder/model/kv_cache_storage.h"

namespace ladder::util {
class ThreadPool;
}

namespace ladder::engine {

class DraftModelDrafter final : public Drafter {
public:
    // Loads the draft from path. Its KV pool has as many blocks as the
    // target's (it never holds more tokens than the target). Throws
    // util::InputError when the file is not a model or its vocabulary differs.
    DraftModelDrafter(const std::string& path, const model::Model& target,
                      const tokenizer::Tokenizer& target_tokenizer, util::ThreadPool& pool,
                      const KvCachePlan& plan, int32_t max_num_batched_tokens);

    void follow_prompts(std::span<const PromptChunk> chunks) override;
    void propose(std::span<const DraftRequest> requests) override;
    void on_released(const Sequence& sequence, bool finished) override;
    bool proposes_distributions() const override { return true; }
    const StepCostModel* step_cost() const override { return &cost_; }

    int64_t kv_bytes() const { return kv_.size_bytes(); }
    int32_t n_blocks_used() const { return block_pool_.n_used(); }

private:
    struct DraftSequence {
        explicit DraftSequence(int32_t block_size) : blocks(block_size) {}
        int32_t n_computed() const { return static_cast<int32_t>(tokens.size()); }
        kv::BlockTable blocks;
        // The tokens at positions 0.. whose K/V the draft's cache holds: the
        // sequence's, then drafts, which may since have been rejected.
        std::vector<TokenId> tokens;
    };
    // One sequence being drafted for in this propose().
    struct Drafting {
        Sequence* sequence;
        DraftSequence* state;
        int32_t max_tokens;
        int32_t n_rows = 0;         // rows in the current batch
        bool has_logits = false;    // its last row gives logits this pass
        int32_t n_constrained = 0;  // drafts its constraint accepted (rolled back at the end)
        bool done = false;
    };

    // Cuts the draft's KV back to the tokens it shares with the sequence.
    void rewind(DraftSequence& state, const Sequence& sequence);
    // Adds rows [state.n_computed(), state.n_computed() + n) of the sequence
    // (its tokens, then its drafts) to the batch.
    void add_rows(Drafting& drafting, int32_t n, bool want_logits);
    void run_batch();
    // Draws the next draft of a sequence from its logit row.
    void draft_from(Drafting& drafting, std::span<float> row);

    ModelBundle bundle_;
    util::ThreadPool& pool_;
    int32_t max_num_batched_tokens_;
    int32_t max_context_;
    kv::BlockPool block_pool_;
    model::KvCacheStorage kv_;
    std::unordered_map<RequestId, DraftSequence> sequences_;
    StepCostModel cost_;
    // Scratch of propose().
    std::vector<Drafting> drafting_;
    std::vector<size_t> logit_owner_;  // drafting_ index of each logit row
    model::Batch batch_;
    std::vector<float> logits_;
};

}  // namespace ladder::engine
