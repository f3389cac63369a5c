// Picks each step's work (iteration-level scheduling, as Orca and vLLM): every
// sequence's computed tokens catch up with its total under a token budget.
// Running sequences go first, oldest first, and a long prompt is cut into
// chunks so that running decodes are never stalled behind it; waiting
// sequences are admitted FCFS while the budget, the sequence limit and free
// KV blocks allow. When a running sequence needs a block and none is free,
// the newest running sequence is preempted: its blocks are freed and it goes
// back to the front of the queue, to be recomputed (its output so far kept).
// With prefix caching, a waiting sequence whose next blocks another sequence
// is computing waits for them to be cached instead of computing them again.
// A decoding sequence with drafted tokens (speculative decoding) computes
// them beside its own, after every running sequence's own tokens and before
// admissions, as far as the budget and free blocks allow; drafts never
// preempt anyone.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <unordered_set>
#include <vector>

#include "ladder/engine/sequence.h"
#include "ladder/kv/block_pool.h"

namespace ladder::engine {

struct ScheduledChunk {
    Sequence* sequence = nullptr;
    int32_t n_tokens = 0;  // computed this step, from sequence->n_computed on
    // The last n_draft of them are the sequence's drafted tokens (its draft,
    // cut to this length), after its own last token.
    int32_t n_draft = 0;
};

struct Schedule {
    std::vector<ScheduledChunk> chunks;  // in batch order
    std::vector<Sequence*> preempted;    // lost their KV this step
    std::vector<Sequence*> admitted;     // left the queue this step
    int32_t n_tokens = 0;
};

// Finds a block that memory no longer holds elsewhere (the disk tier): the
// block, taken and cached, or nullopt.
using LoadMissingBlock =
    std::function<std::optional<kv::BlockId>(const kv::BlockHash&, std::span<const TokenId>)>;

// Lets the tiers below memory fetch a prompt's missing blocks at once (the
// remote tier pipelines them): begin gets the hashes from the first block
// memory lacks to the end of the lookup, before the first LoadMissingBlock
// call; end says the admission is done with them.
struct MissingBlockLookup {
    std::function<void(std::span<const kv::BlockHash>)> begin;
    std::function<void()> end;
};

class Scheduler {
public:
    // prefix_caching: a sequence admitted with nothing computed first takes
    // every cached block its tokens match (by Sequence::block_hashes).
    Scheduler(kv::BlockPool& pool, int32_t max_num_seqs, int32_t max_num_batched_tokens,
              bool prefix_caching);

    void set_missing_block_loader(LoadMissingBlock loader) { load_missing_ = std::move(loader); }
    void set_missing_block_lookup(MissingBlockLookup lookup) {
        missing_lookup_ = std::move(lookup);
    }
    // The sliding-window layers' pool (KvCachePlan::n_window_blocks > 0):
    // every sequence then also needs blocks there for the tokens it computes.
    void set_window_group(kv::BlockPool* window_pool, int32_t window) {
        window_pool_ = window_pool;
        window_ = window;
    }
    // Queues a new sequence behind the others.
    void add(Sequence* sequence);
    // Takes a sequence out wherever it is (finished or aborted) and frees its blocks.
    void remove(Sequence* sequence);
    // Builds this step's schedule and allocates the KV blocks it needs. The
    // reference stays valid until the next call.
    const Schedule& schedule();

    // The running sequences, oldest admission first.
    std::span<Sequence* const> running() const { return running_; }
    int32_t n_waiting() const { return static_cast<int32_t>(waiting_.size()); }
    int32_t n_running() const { return static_cast<int32_t>(running_.size()); }
    bool empty() const { return waiting_.empty() && running_.empty(); }
    // Prompt tokens looked up in the prefix cache, and those found.
    int64_t n_prefix_queried_tokens() const { return n_prefix_queried_tokens_; }
    int64_t n_prefix_hit_tokens() const { return n_prefix_hit_tokens_; }

private:
    // Running sequences first; returns false when it had to stop early (the
    // sequence it was serving was itself the newest and got preempted).
    bool schedule_running(int32_t& budget);
    void admit_waiting(int32_t& budget);
    // After every running sequence's own tokens: each decode's drafted tokens,
    // as far as the budget and the free blocks go (drafts never preempt); the
    // rest of a draft is dropped and the blocks for the kept ones allocated.
    void schedule_drafts(int32_t& budget);
    // Frees the newest running sequence's blocks and requeues it first.
    Sequence* preempt_newest();
    // Takes the cached blocks that hold the sequence's leading full blocks;
    // its last token is always left to compute (it gives the logits).
    void take_cached_prefix(Sequence& sequence);
    // With a window group: how many of the n_hit prefix blocks can be reused
    // given the window blocks still cached; takes those and drops the rest.
    size_t take_window_blocks(Sequence& sequence, size_t n_hit);
    // Blocks in both groups for positions [0, n_tokens): all or nothing.
    bool grow_kv(Sequence& sequence, int32_t n_tokens);
    bool fits(const Sequence& sequence, int32_t n_tokens, int32_t reserve) const;
    void release_kv(Sequence& sequence);
    void give_back_blocks(Sequence& sequence);
    void count_prefix_hit(Sequence& sequence);
    // Hashes of the full blocks running sequences are about to compute.
    void collect_blocks_in_flight();
    void add_blocks_in_flight(const Sequence& sequence);
    bool next_block_in_flight(const Sequence& sequence) const;

    kv::BlockPool& pool_;
    int32_t max_num_seqs_;
    int32_t max_num_batched_tokens_;
    // Blocks kept free when admitting beside running sequences, so that a new
    // admission does not force a preemption at the very next decode.
    int32_t watermark_blocks_;
    bool prefix_caching_;
    int64_t n_prefix_queried_tokens_ = 0;
    int64_t n_prefix_hit_tokens_ = 0;
    std::unordered_set<kv::BlockHash, kv::BlockHashHasher> blocks_in_flight_;
    LoadMissingBlock load_missing_;
    MissingBlockLookup missing_lookup_;
    kv::BlockPool* window_pool_ = nullptr;
    int32_t window_ = 0;
    std::deque<Sequence*> waiting_;
    std::vector<Sequence*> running_;  // oldest admission first
    Schedule schedule_;
};

}  // namespace ladder::engine
