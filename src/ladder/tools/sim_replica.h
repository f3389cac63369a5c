// One simulated replica of the engine: the engine's own Scheduler and
// BlockPool drive it, so it batches, chunks prompts, preempts and hits the
// prefix cache exactly as `ladder serve` does; only the forward pass is
// replaced by the profile's step time. A step is begun (scheduled, its
// duration known) and later ended (its tokens appear at the end time).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "ladder/engine/scheduler.h"
#include "ladder/engine/sequence.h"
#include "ladder/kv/block_pool.h"
#include "ladder/kv/kv_read_counter.h"
#include "ladder/tokenizer/tokenizer.h"
#include "ladder/tools/sim_kv_tier.h"
#include "ladder/tools/sim_profile.h"

namespace ladder::tools {

struct ReplicaOptions {
    int32_t max_num_seqs = 256;
    int32_t max_num_batched_tokens = 512;
    bool prefix_caching = true;
    KvTierOptions disk;    // each replica's own
    KvTierOptions remote;  // one for the fleet
    // Count each step's distinct KV positions (SimStep::n_kv_read) even where
    // the profile does not price them (a calibration replay reads them).
    bool count_kv_reads = false;
};

struct SimRequest {
    int64_t index = 0;  // into the workload, and the results
    double arrival_s = 0.0;
    std::vector<int32_t> prompt;  // token ids
    int32_t output_len = 1;
    // Leading prompt tokens another request may share (a shared prefix);
    // the blocks past them are this request's alone, and only it (after a
    // preemption) can hit them, so they stay out of the prefix index. The
    // default: any block may be shared.
    int32_t n_shared_tokens = std::numeric_limits<int32_t>::max();
    int64_t slot = 0;  // the event loop's handle of it, which the events report
    // Disaggregated serving. prefilled: the prompt's KV arrives computed
    // (sent by a prefill replica) and its first token is already out, so the
    // replica allocates the blocks and only decodes. hold_kv: the blocks stay
    // allocated after the last token, until release_held(slot), as a prefill
    // replica keeps them while they are sent.
    bool prefilled = false;
    bool hold_kv = false;
};

// What the replica tells of a request as it goes.
struct SimEvents {
    // A token of the request in `slot` came out at `time_s`.
    std::function<void(int64_t slot, double time_s)> on_token;
    // The request's last token came out; cached: its prompt tokens the prefix cache served.
    std::function<void(int64_t slot, double time_s, int32_t n_cached)> on_finish;
};

// One step as scheduled: what the event-loop tests check.
struct SimStep {
    double start_s = 0.0;
    double end_s = 0.0;
    int32_t n_tokens = 0;
    int32_t n_sequences = 0;
    double n_context = 0.0;         // positions its rows attend to, summed
    double n_decode_context = 0.0;  // of those, the decode rows' (one-row chunks)
    double n_kv_read = 0.0;         // distinct KV positions its rows attend to
    int32_t n_logit_rows = 0;       // chunks that reach their sequence's last token
    int32_t n_preempted = 0;
    double load_s = 0.0;  // of the time: reading blocks from the disk and remote tiers

    StepWork work() const {
        return {n_tokens, n_context, n_decode_context, n_kv_read, n_logit_rows};
    }
};

class SimReplica {
public:
    // remote: the fleet's remote tier (null: none), which outlives the replica.
    SimReplica(const StepProfile& profile, const ReplicaOptions& options, SimEvents events,
               SimKvTier* remote = nullptr);
    ~SimReplica();
    SimReplica(const SimReplica&) = delete;
    SimReplica& operator=(const SimReplica&) = delete;

    // The request's prompt is copied into a record the replica keeps for
    // the next request once this one finishes.
    void add(const SimRequest& request);
    bool has_work() const { return !scheduler_.empty(); }
    bool in_step() const { return in_step_; }
    // Schedules the next step at now; returns it (end_s is when to end it).
    // Must have work and not be in a step. When held blocks (hold_kv) leave
    // no room for anything, no step begins: in_step() stays false.
    const SimStep& begin_step(double now);
    // The step's tokens come out, finished requests leave.
    void end_step();
    // Frees the blocks of a finished request added with hold_kv.
    void release_held(int64_t slot);

    int64_t n_in_flight() const { return n_in_flight_; }
    int64_t n_preemptions() const { return n_preemptions_; }
    int64_t n_steps() const { return n_steps_; }
    int32_t peak_used_blocks() const { return peak_used_blocks_; }
    int32_t n_blocks() const { return pool_.n_blocks(); }
    int64_t n_prefix_queried_tokens() const { return scheduler_.n_prefix_queried_tokens(); }
    int64_t n_prefix_hit_tokens() const { return scheduler_.n_prefix_hit_tokens(); }
    // Blocks read back from the tiers below memory.
    int64_t n_disk_hit_blocks() const { return n_disk_hit_blocks_; }
    int64_t n_remote_hit_blocks() const { return n_remote_hit_blocks_; }

private:
    struct Tracked;
    struct Record;
    // A finished request's record, made ready for this one, or a new one.
    Record& take_record(const SimRequest& request);
    void cache_full_blocks(engine::Sequence& sequence, Tracked& tracked);
    // Sequence::update_block_hashes, but a private block (past the shared
    // prefix) gets a unique id instead of a content hash: nothing else can match it.
    void update_hashes(engine::Sequence& sequence, const Tracked& tracked) const;
    // The scheduler's loader for blocks memory's index lacks: a preempted
    // sequence's own private blocks, if they are still cached.
    std::optional<kv::BlockId> take_preempted_block(const kv::BlockHash& hash);
    // The scheduler's loader: a preempted sequence's private block, else a
    // shared block from disk, else remote (then kept on disk too), as the engine reads them.
    std::optional<kv::BlockId> load_missing(const kv::BlockHash& hash,
                                            std::span<const int32_t> tokens);
    enum class Tier { Disk, Remote };
    void charge_load(Tier tier);
    void remember_private_blocks(const Tracked& tracked);
    void forget_private_blocks(const Tracked& tracked);

    StepProfile profile_;
    SimEvents events_;
    bool prefix_caching_;
    kv::BlockHash root_;
    std::unique_ptr<tokenizer::Tokenizer> no_text_;  // sequences need one; no text is made
    kv::BlockPool pool_;
    engine::Scheduler scheduler_;
    // Every record this replica made (as many as it ever had in flight), by
    // number (its sequence's id), and those free: a request reuses a finished
    // one's sequence and buffers instead of building the engine's Sequence
    // and growing its vectors anew.
    std::vector<std::unique_ptr<Record>> records_;
    std::vector<Record*> free_records_;
    std::unordered_map<int64_t, Record*> held_;  // by slot: finished, blocks kept (hold_kv)
    int64_t n_in_flight_ = 0;
    // The private blocks of preempted sequences still in flight, by their id:
    // the record's number and the private block's index (Record::private_blocks).
    struct PreemptedBlock {
        size_t record;
        size_t index;
    };
    std::unordered_map<kv::BlockHash, PreemptedBlock, kv::BlockHashHasher> preempted_blocks_;
    std::unique_ptr<SimKvTier> disk_;  // null: none
    SimKvTier* remote_;                // null: none
    KvTierOptions disk_options_;
    KvTierOptions remote_options_;
    double block_bytes_;
    double pending_load_s_ = 0.0;  // of the step being scheduled
    bool disk_read_ = false;       // this step has paid the tier's latency
    bool remote_read_ = false;
    int64_t n_disk_hit_blocks_ = 0;
    int64_t n_remote_hit_blocks_ = 0;
    SimStep step_;
    // Null where neither the profile nor the options want the reads counted:
    // a simulated hour of a large fleet should not pay for them.
    std::unique_ptr<kv::KvReadCounter> kv_reads_;
    std::vector<engine::ScheduledChunk> chunks_;  // the step begun
    bool in_step_ = false;
    int64_t n_preemptions_ = 0;
    int64_t n_steps_ = 0;
    int32_t peak_used_blocks_ = 0;
};

}  // namespace ladder::tools
