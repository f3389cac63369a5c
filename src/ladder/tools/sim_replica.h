// One simulated replica of the engine: the engine's own Scheduler and
// BlockPool drive it, so it batches, chunks prompts, preempts and hits the
// prefix cache exactly as `ladder serve` does; only the forward pass is
// replaced by the profile's step time. A step is begun (scheduled, its
// duration known) and later ended (its tokens appear at the end time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ladder/engine/scheduler.h"
#include "ladder/engine/sequence.h"
#include "ladder/kv/block_pool.h"
#include "ladder/tokenizer/tokenizer.h"
#include "ladder/tools/sim_profile.h"

namespace ladder::tools {

struct ReplicaOptions {
    int32_t max_num_seqs = 256;
    int32_t max_num_batched_tokens = 512;
    bool prefix_caching = true;
};

struct SimRequest {
    int64_t index = 0;  // into the workload, and the results
    double arrival_s = 0.0;
    std::vector<int32_t> prompt;  // token ids
    int32_t output_len = 1;
    int64_t slot = 0;  // the event loop's handle of it, which the events report
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
    double n_context = 0.0;
    int32_t n_preempted = 0;
};

class SimReplica {
public:
    SimReplica(const StepProfile& profile, const ReplicaOptions& options, SimEvents events);
    ~SimReplica();
    SimReplica(const SimReplica&) = delete;
    SimReplica& operator=(const SimReplica&) = delete;

    void add(SimRequest request);
    bool has_work() const { return !scheduler_.empty(); }
    bool in_step() const { return in_step_; }
    // Schedules the next step at now; returns it (end_s is when to end it).
    // Must have work and not be in a step.
    const SimStep& begin_step(double now);
    // The step's tokens come out, finished requests leave.
    void end_step();

    int64_t n_in_flight() const { return n_in_flight_; }
    int64_t n_preemptions() const { return n_preemptions_; }
    int64_t n_steps() const { return n_steps_; }
    int32_t peak_used_blocks() const { return peak_used_blocks_; }
    int32_t n_blocks() const { return pool_.n_blocks(); }
    int64_t n_prefix_queried_tokens() const { return scheduler_.n_prefix_queried_tokens(); }
    int64_t n_prefix_hit_tokens() const { return scheduler_.n_prefix_hit_tokens(); }

private:
    struct Tracked;
    void cache_full_blocks(engine::Sequence& sequence);

    StepProfile profile_;
    SimEvents events_;
    bool prefix_caching_;
    kv::BlockHash root_;
    std::unique_ptr<tokenizer::Tokenizer> no_text_;  // sequences need one; no text is made
    kv::BlockPool pool_;
    engine::Scheduler scheduler_;
    // By slot, which is also the sequence's id: a slot is unique in flight.
    std::vector<std::unique_ptr<Tracked>> by_slot_;
    int64_t n_in_flight_ = 0;
    SimStep step_;
    std::vector<engine::ScheduledChunk> chunks_;  // the step begun
    bool in_step_ = false;
    int64_t n_preemptions_ = 0;
    int64_t n_steps_ = 0;
    int32_t peak_used_blocks_ = 0;
};

}  // namespace ladder::tools
