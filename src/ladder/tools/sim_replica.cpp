#include "ladder/tools/sim_replica.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::tools {

namespace {

// The engine's sequences keep a detokenizer; the simulator makes no text,
// so theirs is built on a tokenizer that is never asked anything.
class NoTextTokenizer final : public tokenizer::Tokenizer {
    using TokenId = tokenizer::TokenId;

public:
    std::vector<TokenId> encode(std::string_view, bool, bool) const override { return {}; }
    std::string token_to_piece(TokenId, bool) const override { return {}; }
    const tokenizer::Vocabulary& vocabulary() const override { return vocabulary_; }
    bool is_end_of_generation(TokenId) const override { return false; }
    TokenId find_token(std::string_view) const override { return -1; }

private:
    tokenizer::Vocabulary vocabulary_;
};

// A generated token no other request produces: outputs are never shared.
int32_t generated_token(int64_t index) { return -1 - static_cast<int32_t>(index & 0x3fffffff); }

// Positions attended by n rows computed from position `first` on: each row
// sees itself and every position before it.
double attended_positions(int32_t first, int32_t n) {
    return static_cast<double>(n) * first + static_cast<double>(n) * (n + 1) / 2.0;
}

// A private block's id in place of a content hash: unique to (request,
// block), with uniform low bits (splitmix64) for the hash sets keyed on them,
// and a high word no content hash is expected to take.
kv::BlockHash private_block_id(int64_t request_index, size_t block) {
    uint64_t x = (static_cast<uint64_t>(request_index) << 32) + static_cast<uint64_t>(block);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return {x ^ 0x9e3779b97f4a7c15ULL, 0x5052'4956'4154'4521ULL};
}

}  // namespace

struct SimReplica::Tracked {
    int64_t index = 0;
    int64_t slot = 0;          // the event loop's handle, which the events report
    Record* record = nullptr;  // the one this is part of
    size_t first_private = 0;  // the first block past the shared prefix
    bool preempted = false;
    bool hold_kv = false;
};

// What a request holds while in flight; kept, with its buffers' room, for the
// replica's next request once it finishes. The sequence's id is the record's
// number in records_, so that a scheduled chunk finds its record through a
// small, hot array, and the record's fields lie beside the sequence's.
struct SimReplica::Record {
    Record(engine::RequestParams params, int32_t block_size, const tokenizer::Tokenizer& no_text,
           size_t number)
        : sequence(engine::RequestId{number}, std::move(params), 1, block_size, no_text),
          held_blocks(block_size) {
        tracked.record = this;
    }

    Tracked tracked;
    engine::Sequence sequence;
    // [i - Tracked::first_private]: where private block i is held.
    struct PrivateBlock {
        kv::BlockId block = -1;  // in memory (-1: not computed yet)
        int64_t disk_stamp = SimKvTier::kNotWritten;
        int64_t remote_stamp = SimKvTier::kNotWritten;
    };
    std::vector<PrivateBlock> private_blocks;
    kv::BlockTable held_blocks;  // a finished hold_kv request's, until released
};

SimReplica::SimReplica(const StepProfile& profile, const ReplicaOptions& options, SimEvents events,
                       SimKvTier* remote)
    : profile_(profile),
      events_(std::move(events)),
      prefix_caching_(options.prefix_caching),
      root_(kv::root_hash(0x5349'4d55'4c41'5445)),
      no_text_(std::make_unique<NoTextTokenizer>()),
      pool_(static_cast<int32_t>(profile.n_kv_blocks), profile.block_size),
      scheduler_(pool_, options.max_num_seqs, options.max_num_batched_tokens,
                 options.prefix_caching),
      remote_(options.prefix_caching ? remote : nullptr),
      disk_options_(options.disk),
      remote_options_(options.remote),
      block_bytes_(profile.kv_bytes_per_token * profile.block_size) {
    if (options.count_kv_reads || profile.per_kv_read_s > 0.0)
        kv_reads_ = std::make_unique<kv::KvReadCounter>(profile.block_size);
    if (options.prefix_caching && options.disk.capacity_bytes > 0) {
        LADDER_CHECK(block_bytes_ > 0.0, "a simulated disk tier without the KV's size");
        disk_ = std::make_unique<SimKvTier>(std::max<int64_t>(
            1,
            static_cast<int64_t>(static_cast<double>(options.disk.capacity_bytes) / block_bytes_)));
    }
    if (prefix_caching_) {
        scheduler_.set_missing_block_loader(
            [this](const kv::BlockHash& hash, std::span<const int32_t> tokens) {
                return load_missing(hash, tokens);
            });
    }
}

SimReplica::~SimReplica() = default;

SimReplica::Record& SimReplica::take_record(const SimRequest& request) {
    if (free_records_.empty()) {
        engine::RequestParams params;
        params.ignore_eos = true;
        params.sampling.seed = 0;  // nothing is sampled; unseeded, each would open random_device
        records_.push_back(std::make_unique<Record>(std::move(params), profile_.block_size,
                                                    *no_text_, records_.size()));
        free_records_.push_back(records_.back().get());
    }
    Record& record = *free_records_.back();
    free_records_.pop_back();
    // The fields the scheduler and this replica read, as the engine's
    // constructor sets them for a prompt; the rest (sampler, text, stops,
    // drafts) a simulated sequence never changes.
    engine::Sequence& sequence = record.sequence;
    LADDER_CHECK(sequence.blocks.n_blocks() == 0 && sequence.draft.empty(),
                 "a simulated sequence reused with blocks or a draft");
    sequence.n_prompt_tokens = static_cast<int32_t>(request.prompt.size());
    sequence.max_tokens = request.output_len;
    // Room for the output too: the first generated token would otherwise
    // copy the whole prompt into a new buffer.
    sequence.tokens.reserve(request.prompt.size() + static_cast<size_t>(request.output_len));
    sequence.tokens.assign(request.prompt.begin(), request.prompt.end());
    sequence.n_computed = 0;
    sequence.n_cached_prompt_tokens = 0;
    sequence.n_preemptions = 0;
    sequence.n_blocks_offered = 0;
    sequence.finished = false;
    sequence.timings = engine::RequestTimings{};
    sequence.timings.arrival = request.arrival_s;
    sequence.block_hashes.clear();
    record.private_blocks.clear();
    return record;
}

void SimReplica::add(const SimRequest& request) {
    Record& record = take_record(request);
    engine::Sequence& sequence = record.sequence;
    Tracked& tracked = record.tracked;
    tracked.index = request.index;
    tracked.slot = request.slot;
    tracked.first_private =
        static_cast<size_t>(std::max(request.n_shared_tokens, 0) / profile_.block_size);
    tracked.preempted = false;
    tracked.hold_kv = request.hold_kv;
    if (request.prefilled) {
        // The prompt's K/V came from the prefill replica with its first token:
        // admission allocates the blocks and the first step decodes.
        sequence.tokens.push_back(generated_token(request.index));
        sequence.n_computed = static_cast<int32_t>(request.prompt.size());
    }
    const auto n_blocks = static_cast<size_t>(
        (static_cast<int64_t>(request.prompt.size()) + request.output_len) / profile_.block_size);
    if (prefix_caching_) {
        sequence.block_hashes.reserve(n_blocks);
        if (n_blocks > tracked.first_private) {
            record.private_blocks.reserve(n_blocks - tracked.first_private);
        }
        update_hashes(sequence, tracked);
    }
    ++n_in_flight_;
    scheduler_.add(&sequence);
}

void SimReplica::update_hashes(engine::Sequence& sequence, const Tracked& tracked) const {
    const auto n_full = static_cast<size_t>(sequence.n_tokens() / profile_.block_size);
    std::vector<kv::BlockHash>& hashes = sequence.block_hashes;
    while (hashes.size() < n_full) {
        const size_t index = hashes.size();
        if (index >= tracked.first_private) {
            hashes.push_back(private_block_id(tracked.index, index));
        } else if (index == 0) {
            hashes.push_back(kv::hash_block(root_, sequence.block_tokens(0), sequence.salt_keys));
        } else {
            hashes.push_back(kv::hash_block(hashes.back(), sequence.block_tokens(index)));
        }
    }
}

std::optional<kv::BlockId> SimReplica::take_preempted_block(const kv::BlockHash& hash) {
    if (preempted_blocks_.empty()) return std::nullopt;
    const auto found = preempted_blocks_.find(hash);
    if (found == preempted_blocks_.end()) return std::nullopt;
    Tracked& tracked = records_[found->second.record]->tracked;
    Record::PrivateBlock& held = tracked.record->private_blocks[found->second.index];
    if (std::optional<kv::BlockId> block = pool_.take_private(held.block, hash)) return block;
    // Evicted from memory since: the tiers below may still hold it.
    const bool on_disk = disk_ && disk_->holds_stamp(held.disk_stamp);
    const bool on_remote = !on_disk && remote_ && remote_->holds_stamp(held.remote_stamp);
    if (!(on_disk || on_remote) || pool_.n_free() == 0) return std::nullopt;
    const kv::BlockId block = pool_.allocate();
    pool_.cache_private(block, hash);
    held.block = block;
    if (on_remote && disk_) held.disk_stamp = disk_->write_private();
    charge_load(on_disk ? Tier::Disk : Tier::Remote);
    return block;
}

std::optional<kv::BlockId> SimReplica::load_missing(const kv::BlockHash& hash,
                                                    std::span<const int32_t> tokens) {
    if (std::optional<kv::BlockId> block = take_preempted_block(hash)) return block;
    if (!disk_ && !remote_) return std::nullopt;
    const bool on_disk = disk_ && disk_->contains(hash);
    if (pool_.n_free() == 0 || (!on_disk && !(remote_ && remote_->contains(hash)))) {
        return std::nullopt;
    }
    const kv::BlockId block = pool_.allocate();
    // Read from Redis, it is kept on disk too, as the engine does.
    if (!on_disk && disk_) disk_->write(hash);
    pool_.cache_block(block, hash, tokens);
    charge_load(on_disk ? Tier::Disk : Tier::Remote);
    return block;
}

void SimReplica::charge_load(Tier tier) {
    const KvTierOptions& options = tier == Tier::Disk ? disk_options_ : remote_options_;
    bool& read = tier == Tier::Disk ? disk_read_ : remote_read_;
    pending_load_s_ += block_bytes_ / options.bytes_per_s + (read ? 0.0 : options.latency_s);
    read = true;
    ++(tier == Tier::Disk ? n_disk_hit_blocks_ : n_remote_hit_blocks_);
}

void SimReplica::remember_private_blocks(const Tracked& tracked) {
    const Record& record = *tracked.record;
    const std::vector<kv::BlockHash>& hashes = record.sequence.block_hashes;
    const auto number = static_cast<size_t>(record.sequence.id);
    for (size_t i = 0; i < record.private_blocks.size(); ++i) {
        if (record.private_blocks[i].block < 0) continue;
        preempted_blocks_[hashes[tracked.first_private + i]] = PreemptedBlock{number, i};
    }
}

void SimReplica::forget_private_blocks(const Tracked& tracked) {
    const Record& record = *tracked.record;
    const std::vector<kv::BlockHash>& hashes = record.sequence.block_hashes;
    for (size_t i = 0; i < record.private_blocks.size(); ++i) {
        preempted_blocks_.erase(hashes[tracked.first_private + i]);
    }
}

const SimStep& SimReplica::begin_step(double now) {
    LADDER_CHECK(!in_step_ && has_work(), "a simulated step begun without work");
    pending_load_s_ = 0.0;
    disk_read_ = remote_read_ = false;
    const engine::Schedule& schedule = scheduler_.schedule();
    if (schedule.chunks.empty() && schedule.preempted.empty() && !held_.empty()) {
        // Blocks held for transfers leave no room: no step until one is
        // released (the event loop starts one then).
        step_ = SimStep{};
        step_.start_s = step_.end_s = now;
        return step_;
    }
    for (engine::Sequence* sequence : schedule.admitted) {
        sequence->n_blocks_offered = sequence->n_computed / profile_.block_size;
    }
    for (engine::Sequence* sequence : schedule.preempted) {
        sequence->n_blocks_offered = 0;
        Tracked& tracked = records_[static_cast<size_t>(sequence->id)]->tracked;
        tracked.preempted = true;
        if (prefix_caching_) remember_private_blocks(tracked);
    }
    n_preemptions_ += static_cast<int64_t>(schedule.preempted.size());
    chunks_ = schedule.chunks;
    step_ = SimStep{};
    step_.start_s = now;
    step_.n_tokens = schedule.n_tokens;
    step_.n_sequences = static_cast<int32_t>(chunks_.size());
    step_.n_preempted = static_cast<int32_t>(schedule.preempted.size());
    for (const engine::ScheduledChunk& chunk : chunks_) {
        const engine::Sequence& sequence = *chunk.sequence;
        const double attended = attended_positions(sequence.n_computed, chunk.n_tokens);
        step_.n_context += attended;
        if (chunk.n_tokens == 1) step_.n_decode_context += attended;
        if (kv_reads_)
            kv_reads_->add(sequence.blocks.blocks(), sequence.n_computed + chunk.n_tokens);
        if (chunk.n_tokens == sequence.n_uncomputed()) ++step_.n_logit_rows;
    }
    if (kv_reads_) step_.n_kv_read = kv_reads_->take_positions();
    // The engine reads the tiers' blocks while it schedules, before the forward pass.
    step_.load_s = pending_load_s_;
    step_.end_s = now + pending_load_s_ + profile_.step_seconds(step_.work());
    peak_used_blocks_ = std::max(peak_used_blocks_, pool_.n_used());
    in_step_ = true;
    ++n_steps_;
    return step_;
}

void SimReplica::end_step() {
    LADDER_CHECK(in_step_, "a simulated step ended that was not begun");
    in_step_ = false;
    const double now = step_.end_s;
    for (const engine::ScheduledChunk& chunk : chunks_) {
        engine::Sequence& sequence = *chunk.sequence;
        sequence.n_computed += chunk.n_tokens;
        Tracked& tracked = records_[static_cast<size_t>(sequence.id)]->tracked;
        const int64_t slot = tracked.slot;
        if (prefix_caching_) cache_full_blocks(sequence, tracked);
        // A chunk that reaches the last token gives the logits of the next.
        if (sequence.n_uncomputed() > 0) continue;
        sequence.tokens.push_back(generated_token(tracked.index));
        if (prefix_caching_) update_hashes(sequence, tracked);
        if (events_.on_token) events_.on_token(slot, now);
        if (sequence.n_generated() < sequence.max_tokens) continue;
        if (events_.on_finish) events_.on_finish(slot, now, sequence.n_cached_prompt_tokens);
        if (tracked.preempted) forget_private_blocks(tracked);
        --n_in_flight_;
        if (tracked.hold_kv) {
            // The blocks leave the sequence, so the scheduler frees none.
            tracked.record->held_blocks = std::move(sequence.blocks);
            sequence.blocks = kv::BlockTable(profile_.block_size);
            scheduler_.remove(&sequence);
            held_[slot] = tracked.record;
            continue;
        }
        scheduler_.remove(&sequence);
        // Kept by the replica, not the slot: every replica sees every slot
        // in time, but holds only as many records as it ever had in flight.
        free_records_.push_back(tracked.record);
    }
    chunks_.clear();
}

void SimReplica::release_held(int64_t slot) {
    const auto found = held_.find(slot);
    LADDER_CHECK(found != held_.end(), "a simulated request released that holds no blocks");
    found->second->held_blocks.release_all(pool_);
    free_records_.push_back(found->second);
    held_.erase(found);
}

// As the engine does after each step: every full block now computed is
// offered to the prefix cache (the first copy of a content stays cached);
// a private block is kept as cached but out of the index.
void SimReplica::cache_full_blocks(engine::Sequence& sequence, Tracked& tracked) {
    const int32_t end = std::min(sequence.n_computed / profile_.block_size,
                                 static_cast<int32_t>(sequence.block_hashes.size()));
    for (int32_t index = sequence.n_blocks_offered; index < end; ++index) {
        const auto i = static_cast<size_t>(index);
        const kv::BlockId block = sequence.blocks.blocks()[i];
        const kv::BlockHash& hash = sequence.block_hashes[i];
        if (i < tracked.first_private) {
            // Only a new cached copy is written through; the tiers skip what they hold.
            if (pool_.cache_block(block, hash, sequence.block_tokens(i))) {
                if (disk_) disk_->write(hash);
                if (remote_) remote_->write(hash);
            }
            continue;
        }
        const size_t p = i - tracked.first_private;
        std::vector<Record::PrivateBlock>& private_blocks = tracked.record->private_blocks;
        if (private_blocks.size() <= p) private_blocks.resize(p + 1);
        Record::PrivateBlock& held = private_blocks[p];
        if (pool_.is_cached(block)) continue;  // taken back after a preemption
        pool_.cache_private(block, hash);
        held.block = block;
        if (disk_ && !disk_->holds_stamp(held.disk_stamp)) held.disk_stamp = disk_->write_private();
        if (remote_ && !remote_->holds_stamp(held.remote_stamp)) {
            held.remote_stamp = remote_->write_private();
        }
    }
    sequence.n_blocks_offered = std::max(sequence.n_blocks_offered, end);
}

}  // namespace ladder::tools
