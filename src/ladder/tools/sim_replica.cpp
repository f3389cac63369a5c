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

}  // namespace

struct SimReplica::Tracked {
    int64_t index;
    std::unique_ptr<engine::Sequence> sequence;
};

SimReplica::SimReplica(const StepProfile& profile, const ReplicaOptions& options, SimEvents events)
    : profile_(profile),
      events_(std::move(events)),
      prefix_caching_(options.prefix_caching),
      root_(kv::root_hash(0x5349'4d55'4c41'5445)),
      no_text_(std::make_unique<NoTextTokenizer>()),
      pool_(static_cast<int32_t>(profile.n_kv_blocks), profile.block_size),
      scheduler_(pool_, options.max_num_seqs, options.max_num_batched_tokens,
                 options.prefix_caching) {}

SimReplica::~SimReplica() = default;

void SimReplica::add(SimRequest request) {
    engine::RequestParams params;
    params.prompt = std::move(request.prompt);
    params.ignore_eos = true;
    params.sampling.seed = 0;  // nothing is sampled; unseeded, each would open random_device
    auto sequence = std::make_unique<engine::Sequence>(
        engine::RequestId{static_cast<uint64_t>(request.slot)}, std::move(params),
        request.output_len, profile_.block_size, *no_text_);
    sequence->timings.arrival = request.arrival_s;
    if (prefix_caching_) sequence->update_block_hashes(root_);
    engine::Sequence* added = sequence.get();
    const auto slot = static_cast<size_t>(request.slot);
    if (by_slot_.size() <= slot) by_slot_.resize(slot + 1);
    LADDER_CHECK(by_slot_[slot] == nullptr, "a simulated slot given twice");
    by_slot_[slot] = std::make_unique<Tracked>(Tracked{request.index, std::move(sequence)});
    ++n_in_flight_;
    scheduler_.add(added);
}

const SimStep& SimReplica::begin_step(double now) {
    LADDER_CHECK(!in_step_ && has_work(), "a simulated step begun without work");
    const engine::Schedule& schedule = scheduler_.schedule();
    for (engine::Sequence* sequence : schedule.admitted) {
        sequence->n_blocks_offered = sequence->n_computed / profile_.block_size;
    }
    for (engine::Sequence* sequence : schedule.preempted) sequence->n_blocks_offered = 0;
    n_preemptions_ += static_cast<int64_t>(schedule.preempted.size());
    chunks_ = schedule.chunks;
    step_ = SimStep{};
    step_.start_s = now;
    step_.n_tokens = schedule.n_tokens;
    step_.n_sequences = static_cast<int32_t>(chunks_.size());
    step_.n_preempted = static_cast<int32_t>(schedule.preempted.size());
    for (const engine::ScheduledChunk& chunk : chunks_) {
        step_.n_context += attended_positions(chunk.sequence->n_computed, chunk.n_tokens);
    }
    step_.end_s = now + profile_.step_seconds(step_.n_tokens, step_.n_context);
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
        if (prefix_caching_) cache_full_blocks(sequence);
        // A chunk that reaches the last token gives the logits of the next.
        if (sequence.n_uncomputed() > 0) continue;
        const auto slot = static_cast<int64_t>(sequence.id);
        std::unique_ptr<Tracked>& tracked = by_slot_[static_cast<size_t>(slot)];
        sequence.tokens.push_back(generated_token(tracked->index));
        if (prefix_caching_) sequence.update_block_hashes(root_);
        if (events_.on_token) events_.on_token(slot, now);
        if (sequence.n_generated() < sequence.max_tokens) continue;
        if (events_.on_finish) events_.on_finish(slot, now, sequence.n_cached_prompt_tokens);
        scheduler_.remove(&sequence);
        tracked.reset();
        --n_in_flight_;
    }
    chunks_.clear();
}

// As the engine does after each step: every full block now computed is
// offered to the prefix cache (the first copy of a content stays cached).
void SimReplica::cache_full_blocks(engine::Sequence& sequence) {
    const int32_t end = std::min(sequence.n_computed / profile_.block_size,
                                 static_cast<int32_t>(sequence.block_hashes.size()));
    for (int32_t index = sequence.n_blocks_offered; index < end; ++index) {
        const auto i = static_cast<size_t>(index);
        pool_.cache_block(sequence.blocks.blocks()[i], sequence.block_hashes[i],
                          sequence.block_tokens(i));
    }
    sequence.n_blocks_offered = std::max(sequence.n_blocks_offered, end);
}

}  // namespace ladder::tools
