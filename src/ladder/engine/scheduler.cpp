#include "ladder/engine/scheduler.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::engine {

Scheduler::Scheduler(kv::BlockPool& pool, int32_t max_num_seqs, int32_t max_num_batched_tokens,
                     bool prefix_caching)
    : pool_(pool),
      max_num_seqs_(max_num_seqs),
      max_num_batched_tokens_(max_num_batched_tokens),
      watermark_blocks_(std::max(1, pool.n_blocks() / 100)),
      prefix_caching_(prefix_caching) {}

void Scheduler::add(Sequence* sequence) { waiting_.push_back(sequence); }

void Scheduler::remove(Sequence* sequence) {
    std::erase(waiting_, sequence);
    std::erase(running_, sequence);
    release_kv(*sequence);
    sequence->n_computed = 0;
}

bool Scheduler::grow_kv(Sequence& sequence, int32_t n_tokens) {
    if (!fits(sequence, n_tokens, 0)) return false;
    bool grown = sequence.blocks.grow_to(n_tokens, pool_);
    if (window_pool_ != nullptr)
        grown = grown && sequence.window_blocks.grow_to(n_tokens, *window_pool_);
    LADDER_CHECK(grown, "blocks counted free could not be allocated");
    return true;
}

bool Scheduler::fits(const Sequence& sequence, int32_t n_tokens, int32_t reserve) const {
    if (sequence.blocks.blocks_missing(n_tokens) + reserve > pool_.n_free()) return false;
    return window_pool_ == nullptr ||
           sequence.window_blocks.blocks_missing(n_tokens) + reserve <= window_pool_->n_free();
}

void Scheduler::release_kv(Sequence& sequence) {
    sequence.blocks.release_all(pool_);
    if (window_pool_ != nullptr) sequence.window_blocks.release_all(*window_pool_);
}

const Schedule& Scheduler::schedule() {
    schedule_.chunks.clear();
    schedule_.preempted.clear();
    schedule_.admitted.clear();
    int32_t budget = max_num_batched_tokens_;
    // A step that had to preempt drafts nothing and admits nobody: the memory
    // is already short.
    if (schedule_running(budget) && schedule_.preempted.empty()) {
        schedule_drafts(budget);
        admit_waiting(budget);
    } else {
        for (ScheduledChunk& chunk : schedule_.chunks) chunk.sequence->draft.truncate(0);
    }
    schedule_.n_tokens = max_num_batched_tokens_ - budget;
    return schedule_;
}

bool Scheduler::schedule_running(int32_t& budget) {
    // Decodes (one token each) are served before any prompt chunk takes the
    // budget, however the two are ordered in running_.
    int32_t decodes_left = 0;
    for (const Sequence* s : running_) decodes_left += s->n_uncomputed() == 1;

    for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
        Sequence* sequence = running_[i];
        const bool decode = sequence->n_uncomputed() == 1;
        decodes_left -= decode;
        const int32_t share = decode ? budget : budget - decodes_left;
        const int32_t n = std::min(sequence->n_uncomputed(), share);
        if (n <= 0) continue;
        while (!grow_kv(*sequence, sequence->n_computed + n)) {
            // The victim is newer than this one, so not served yet; if it was a
            // decode, it no longer needs its share of the budget.
            const bool victim_was_decode = running_.back()->n_uncomputed() == 1;
            Sequence* victim = preempt_newest();
            if (victim == sequence) return false;
            decodes_left -= victim_was_decode ? 1 : 0;
        }
        schedule_.chunks.push_back({sequence, n});
        budget -= n;
    }
    return true;
}

void Scheduler::schedule_drafts(int32_t& budget) {
    for (ScheduledChunk& chunk : schedule_.chunks) {
        Sequence& sequence = *chunk.sequence;
        if (sequence.draft.empty()) continue;
        // Only a decode verifies drafts: its one token is its last.
        const bool decode = chunk.n_tokens == 1 && sequence.n_uncomputed() == 1;
        int32_t n = decode ? std::min(sequence.draft.size(), budget) : 0;
        // The drafts follow the last token, at n_computed; the watermark
        // stays free for admissions, as for a prompt's blocks.
        const int32_t first_draft_position = sequence.n_computed + 1;
        while (n > 0 && !fits(sequence, first_draft_position + n, watermark_blocks_)) --n;
        if (n > 0) grow_kv(sequence, first_draft_position + n);
        sequence.draft.truncate(n);
        chunk.n_tokens += n;
        chunk.n_draft = n;
        budget -= n;
    }
}

void Scheduler::admit_waiting(int32_t& budget) {
    // The blocks in flight are gathered only when a sequence is considered,
    // before the first (so from the same running_), not every step: most
    // steps have nobody waiting.
    bool in_flight_collected = !prefix_caching_;
    for (auto it = waiting_.begin();
         it != waiting_.end() && budget > 0 && n_running() < max_num_seqs_;) {
        if (!in_flight_collected) {
            collect_blocks_in_flight();
            in_flight_collected = true;
        }
        Sequence* sequence = *it;
        const bool fresh = sequence->n_computed == 0;
        if (fresh && prefix_caching_) {
            take_cached_prefix(*sequence);
            // Another sequence is computing this one's next blocks right now
            // (n > 1 choices, or the same prompt twice): wait for them to be
            // cached rather than compute them twice. Others may go first.
            if (next_block_in_flight(*sequence)) {
                give_back_blocks(*sequence);
                ++it;
                continue;
            }
        }
        const int32_t n = std::min(sequence->n_uncomputed(), budget);
        const int32_t reserve = running_.empty() ? 0 : watermark_blocks_;
        if (!fits(*sequence, sequence->n_computed + n, reserve)) {
            // Not this step: the cached blocks go back, to be found again.
            if (fresh) give_back_blocks(*sequence);
            break;
        }
        grow_kv(*sequence, sequence->n_computed + n);
        it = waiting_.erase(it);
        running_.push_back(sequence);
        schedule_.admitted.push_back(sequence);
        schedule_.chunks.push_back({sequence, n});
        budget -= n;
        if (fresh && prefix_caching_) {
            count_prefix_hit(*sequence);
            add_blocks_in_flight(*sequence);
        }
    }
}

void Scheduler::take_cached_prefix(Sequence& sequence) {
    const int32_t block_size = pool_.block_size();
    const auto n_lookup = std::min<size_t>(
        sequence.block_hashes.size(), static_cast<size_t>((sequence.n_tokens() - 1) / block_size));
    size_t n_hit = 0;
    bool lookup_begun = false;
    for (; n_hit < n_lookup; ++n_hit) {
        const std::span<const TokenId> tokens = sequence.block_tokens(n_hit);
        std::optional<kv::BlockId> block = pool_.take_cached(sequence.block_hashes[n_hit], tokens);
        if (!block && load_missing_) {
            if (!lookup_begun && missing_lookup_.begin) {
                missing_lookup_.begin(
                    std::span(sequence.block_hashes).subspan(n_hit, n_lookup - n_hit));
                lookup_begun = true;
            }
            block = load_missing_(sequence.block_hashes[n_hit], tokens);
        }
        if (!block) break;
        sequence.blocks.append(*block);
    }
    if (lookup_begun && missing_lookup_.end) missing_lookup_.end();
    if (window_pool_ != nullptr) n_hit = take_window_blocks(sequence, n_hit);
    sequence.n_computed = static_cast<int32_t>(n_hit) * block_size;
}

size_t Scheduler::take_window_blocks(Sequence& sequence, size_t n_hit) {
    const int32_t block_size = pool_.block_size();
    // The first window block the next token needs, when n blocks are reused.
    auto first_needed = [&](size_t n) {
        return static_cast<size_t>(std::max(0, static_cast<int32_t>(n) * block_size - window_ + 1) /
                                   block_size);
    };
    auto window_block_cached = [&](size_t i) {
        return window_pool_->has_cached(sequence.block_hashes[i], sequence.block_tokens(i));
    };
    // Reuse only as far as the sliding-window layers still hold the blocks
    // that the window behind that point covers.
    size_t n_usable = n_hit;
    for (; n_usable > 0; --n_usable) {
        bool all_cached = true;
        for (size_t i = first_needed(n_usable); i < n_usable && all_cached; ++i) {
            all_cached = window_block_cached(i);
        }
        if (all_cached) break;
    }
    while (static_cast<size_t>(sequence.blocks.n_blocks()) > n_usable) {
        sequence.blocks.release_last(pool_);
    }
    sequence.window_blocks.pad_released(static_cast<int32_t>(first_needed(n_usable)));
    for (size_t i = first_needed(n_usable); i < n_usable; ++i) {
        sequence.window_blocks.append(
            *window_pool_->take_cached(sequence.block_hashes[i], sequence.block_tokens(i)));
    }
    return n_usable;
}

void Scheduler::give_back_blocks(Sequence& sequence) {
    release_kv(sequence);
    sequence.n_computed = 0;
}

void Scheduler::count_prefix_hit(Sequence& sequence) {
    n_prefix_queried_tokens_ += sequence.n_tokens();
    n_prefix_hit_tokens_ += sequence.n_computed;
    // The client is told the first admission's count: recomputation after a
    // preemption is the server's business, not the request's.
    if (sequence.n_preemptions == 0) {
        sequence.n_cached_prompt_tokens = std::min(sequence.n_computed, sequence.n_prompt_tokens);
    }
}

void Scheduler::collect_blocks_in_flight() {
    blocks_in_flight_.clear();
    for (const Sequence* sequence : running_) add_blocks_in_flight(*sequence);
}

void Scheduler::add_blocks_in_flight(const Sequence& sequence) {
    const auto first = static_cast<size_t>(sequence.n_computed / pool_.block_size());
    for (size_t i = first; i < sequence.block_hashes.size(); ++i) {
        blocks_in_flight_.insert(sequence.block_hashes[i]);
    }
}

bool Scheduler::next_block_in_flight(const Sequence& sequence) const {
    const auto next = static_cast<size_t>(sequence.n_computed / pool_.block_size());
    // Only a full block that is not the one holding the last token can be shared.
    const auto shareable = static_cast<size_t>((sequence.n_tokens() - 1) / pool_.block_size());
    return next < std::min(shareable, sequence.block_hashes.size()) &&
           blocks_in_flight_.contains(sequence.block_hashes[next]);
}

Sequence* Scheduler::preempt_newest() {
    LADDER_CHECK(!running_.empty(), "preemption with nothing running");
    Sequence* victim = running_.back();
    running_.pop_back();
    // Its generated tokens stay; everything is recomputed on readmission.
    release_kv(*victim);
    victim->n_computed = 0;
    ++victim->n_preemptions;
    waiting_.push_front(victim);
    schedule_.preempted.push_back(victim);
    return victim;
}

}  // namespace ladder::engine
