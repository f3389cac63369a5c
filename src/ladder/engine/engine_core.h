// The engine's step, single-threaded: scheduler, KV cache and model runner
// together. `ladder generate` drives it directly; Engine runs it on its own
// thread for the server. Each step: schedule, build one Batch, forward,
// sample, apply stop rules, emit outputs, free what finished.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ladder/engine/disk_kv_cache.h"
#include "ladder/engine/engine_config.h"
#include "ladder/engine/keyed_hash.h"
#include "ladder/engine/remote_kv_cache.h"
#include "ladder/engine/request.h"
#include "ladder/engine/scheduler.h"
#include "ladder/engine/sequence.h"
#include "ladder/engine/speculator.h"
#include "ladder/kv/block_pool.h"
#include "ladder/kv/kv_read_counter.h"
#include "ladder/model/batch.h"
#include "ladder/model/kv_cache_storage.h"
#include "ladder/model/model.h"
#include "ladder/tokenizer/tokenizer.h"
#include "ladder/util/thread_pool.h"

namespace ladder::engine {

// Counters since start and the state after the last step.
struct EngineStats {
    int32_t n_running = 0;
    int32_t n_waiting = 0;
    int32_t n_blocks = 0;
    int32_t n_blocks_used = 0;
    int32_t n_block_size = 0;  // tokens per block
    int64_t n_kv_tokens = 0;   // tokens held in the KV cache by live sequences
    int64_t n_steps = 0;
    int64_t n_preemptions = 0;
    int64_t n_prompt_tokens = 0;  // of requests that reached their first token (cached included)
    int64_t n_generated_tokens = 0;
    int64_t n_finished = 0;
    int64_t n_aborted = 0;
    int64_t n_failed = 0;         // ended with FinishReason::Error
    int32_t n_blocks_cached = 0;  // blocks holding a known prefix, in use or evictable
    int32_t n_window_blocks = 0;  // the sliding-window layers' group (0: none)
    int32_t n_window_blocks_used = 0;
    int64_t n_prefix_queried_tokens = 0;  // tokens looked up in the prefix cache
    int64_t n_prefix_hit_tokens = 0;      // of which found
    int64_t n_disk_blocks_loaded = 0;     // prefix blocks read back from the disk tier
    int64_t n_disk_blocks_written = 0;
    int64_t n_disk_files = 0;
    RemoteKvCacheStats remote;  // the remote tier's (all zero without --kv-remote)
    // Last step: tokens, sequences, and where its time went.
    int32_t last_step_tokens = 0;
    int32_t last_step_sequences = 0;
    int32_t last_step_logit_rows = 0;  // rows whose next-token logits were computed
    double last_step_seconds = 0.0;
    double last_forward_seconds = 0.0;
    double last_sampling_seconds = 0.0;
    // Speculative decoding's counters (all zero with it off).
    SpecDecodeStats spec_decode;
    // Scheduling, batch building and outputs: the step minus forward and sampling.
    double last_overhead_seconds = 0.0;
    // The same, summed over all steps.
    double forward_seconds = 0.0;
    double sampling_seconds = 0.0;
    double overhead_seconds = 0.0;
};

class EngineCore {
public:
    EngineCore(model::Model& model, const tokenizer::Tokenizer& tokenizer, util::ThreadPool& pool,
               const EngineConfig& config);

    const KvCachePlan& kv_plan() const { return plan_; }

    // Checks a request against the limits and returns the max_tokens it will
    // run with. Throws util::InputError naming what is wrong. Reads only
    // state fixed at construction, so any thread may call it.
    int32_t validate(const RequestParams& params) const;
    // Queues a request (validated first: util::InputError, nothing queued).
    // Outputs go to sink from step(). Any other failure while taking it in
    // ends just this request, with FinishReason::Error.
    void add_request(RequestId id, RequestParams params, OutputSink sink);
    // Ends a request wherever it is; its last output says Abort. Unknown or
    // finished ids are ignored.
    void abort(RequestId id);
    void abort_all();

    bool has_work() const { return !sequences_.empty(); }
    // One engine step; does nothing without work. A failure (an exception,
    // such as std::bad_alloc) while handling one sequence ends that sequence
    // with FinishReason::Error and the step goes on; one outside any sequence
    // ends every sequence so, and the engine stays usable.
    void step();

    const EngineStats& stats() const { return stats_; }
    int32_t n_free_blocks() const { return block_pool_.n_free(); }
    // Every block of every group is free (nothing holds KV).
    bool all_blocks_free() const {
        return block_pool_.n_used() == 0 && (!window_pool_ || window_pool_->n_used() == 0);
    }
    // Null without a disk tier.
    const DiskKvCache* disk_cache() const { return disk_cache_.get(); }
    // Null without a remote tier. Its stats() may be read from any thread.
    const RemoteKvCache* remote_cache() const { return remote_cache_.get(); }
    // Null with speculative decoding off.
    const Speculator* speculator() const { return speculator_.get(); }
    // Every cached block of the prefix cache with the tokens it holds and its
    // K/V storage (tests check that no cached block holds a rejected draft).
    const kv::BlockPool& block_pool() const { return block_pool_; }
    const model::KvCacheStorage& kv_storage() const { return kv_storage_; }

private:
    // When the phases of one step ended, in trace nanoseconds.
    struct StepMarks {
        int64_t start, forward_start, forward_end, sampling_end, outputs_end, end;
    };

    void run_step();
    // The trace's events of a step: each request's part in it, then the
    // step's slices and the engine's counters (recorded only while tracing).
    void trace_chunks(const Schedule& schedule, int64_t forward_start, int64_t forward_end);
    void trace_step(const StepMarks& marks);
    void build_batch(const Schedule& schedule);
    StepShape batch_shape() const;
    // Positions attended by the batch's decode rows (sequences with one row),
    // and the distinct KV positions its rows attend to: what `ladder simulate`
    // prices (kv::KvReadCounter).
    double decode_context() const;
    double kv_positions_read();
    // Samples the next tokens of every sequence whose computed caught up with
    // its total: its drafts verified, then one of the target's own.
    void sample_ready();
    // Counts a chunk's rows as computed, but for rejected drafts, whose KV
    // blocks go back to the pool.
    void commit_computed(const ScheduledChunk& chunk);
    // Emits the step's new tokens of a sequence one by one until one ends it.
    // Returns true when the sequence finished.
    bool emit_new_tokens(Sequence& sequence, double now);
    // Appends the sampled token, applies stop rules, emits the output.
    // Returns true when the sequence finished.
    // constraint_ended: the sequence's grammar ended with this token.
    bool emit_token(Sequence& sequence, TokenId token, TokenLogprob* logprob, bool constraint_ended,
                    double now);
    // A preempted sequence lost its KV: nothing it had is cached or drafted.
    void forget_kv(Sequence& sequence);
    void finish(Sequence& sequence, RequestOutput& output, FinishReason reason, double now);
    // Ends a sequence with FinishReason::Error.
    void fail(Sequence& sequence, std::string_view what);
    void fail_all(std::string_view what);
    // The text a generated token adds (marker_tokens.h).
    std::string detokenize(Sequence& sequence, TokenId token);
    RequestOutput make_output(const Sequence& sequence, double now) const;
    void refresh_stats();
    // Offers the full computed blocks not offered yet to the prefix cache.
    void cache_full_blocks(Sequence& sequence);
    // Gives back the sliding-window blocks no future token can see.
    void release_passed_window_blocks(Sequence& sequence);
    // A block memory lacks, from the disk tier, else the remote one.
    std::optional<kv::BlockId> load_missing(const kv::BlockHash& hash,
                                            std::span<const TokenId> tokens);
    // The secret cache salts are keyed with: the remote tier's (shared by the
    // replicas), else the disk tier's (kept across restarts), else random.
    KeyedHash::Secret salt_secret() const;
    // The block-hash extra keys of a cache salt (none for the empty salt).
    std::vector<uint64_t> salt_keys(const std::string& cache_salt) const;

    model::Model& model_;
    const tokenizer::Tokenizer& tokenizer_;
    util::ThreadPool& pool_;
    KvCachePlan plan_;
    int32_t max_num_seqs_;
    int32_t max_num_batched_tokens_;
    bool prefix_caching_;
    kv::BlockHash root_hash_;
    kv::BlockPool block_pool_;
    std::unique_ptr<kv::BlockPool> window_pool_;  // null without a sliding-window group
    model::KvCacheStorage kv_storage_;
    Scheduler scheduler_;
    std::unique_ptr<DiskKvCache> disk_cache_;      // null without --kv-disk-cache
    std::unique_ptr<RemoteKvCache> remote_cache_;  // null without --kv-remote
    // Turns cache salts into extra keys (salt_secret()), so salted blocks are
    // found again after a restart and on other replicas.
    KeyedHash salt_hash_;
    std::vector<TokenId> markers_;            // control tokens output as their text
    std::unique_ptr<Speculator> speculator_;  // null without --speculative-config
    std::unordered_map<RequestId, std::unique_ptr<Sequence>> sequences_;
    EngineStats stats_;

    // Per-step scratch, reused so a step does not allocate once warm.
    model::Batch batch_;
    kv::KvReadCounter kv_reads_;   // for the trace's step args
    double traced_kv_read_ = 0.0;  // kv_positions_read() of the step being traced
    std::vector<float> logits_;
    struct Sampled {
        Sequence* sequence;
        int32_t first_logit_row;
        int32_t n_rows;              // its drafts + 1
        std::exception_ptr failure;  // verifying this sequence threw
    };
    std::vector<Sampled> sampled_;
    std::vector<Sequence*> finished_;
};

}  // namespace ladder::engine
