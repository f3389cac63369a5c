#include "ladder/engine/engine_core.h"

#include <algorithm>

#include "ladder/engine/marker_tokens.h"
#include "ladder/engine/request_trace.h"
#include "ladder/engine/verifier.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"
#include "ladder/util/timer.h"
#include "ladder/util/trace.h"

namespace ladder::engine {

namespace {

namespace trace = util::trace;

// OpenAI caps top_logprobs at 20.
constexpr int32_t kMaxLogprobs = 20;
constexpr float kMaxLogitBias = 100.0f;

std::unique_ptr<DiskKvCache> make_disk_cache(const EngineConfig& config,
                                             const model::KvCacheShape& shape) {
    if (config.kv_disk_cache_dir.empty()) return nullptr;
    if (!config.prefix_caching)
        util::fail("--kv-disk-cache needs prefix caching (drop --no-prefix-cache)");
    return std::make_unique<DiskKvCache>(config.kv_disk_cache_dir, config.kv_disk_cache_bytes,
                                         config.model_key, shape);
}

std::unique_ptr<RemoteKvCache> make_remote_cache(const EngineConfig& config,
                                                 const model::KvCacheShape& shape) {
    if (!config.kv_remote) return nullptr;
    if (!config.prefix_caching)
        util::fail("--kv-remote needs prefix caching (drop --no-prefix-cache)");
    RemoteKvCacheOptions options;
    options.read_deadline_seconds = config.kv_remote_timeout_seconds;
    return std::make_unique<RemoteKvCache>(*config.kv_remote, config.model_key, shape, options);
}

}  // namespace

const char* finish_reason_name(FinishReason reason) {
    switch (reason) {
        case FinishReason::Stop:
            return "stop";
        case FinishReason::Length:
            return "length";
        case FinishReason::Abort:
            return "abort";
        case FinishReason::Error:
            return "error";
    }
    return "unknown";
}

EngineCore::EngineCore(model::Model& model, const tokenizer::Tokenizer& tokenizer,
                       util::ThreadPool& pool, const EngineConfig& config)
    : model_(model),
      tokenizer_(tokenizer),
      pool_(pool),
      plan_(plan_kv_cache(config, model)),
      max_num_seqs_(config.max_num_seqs),
      max_num_batched_tokens_(config.max_num_batched_tokens),
      prefix_caching_(config.prefix_caching),
      // The model's identity roots every chain, so no file of the disk tier
      // can match a block of another model.
      root_hash_(kv::root_hash(config.model_key)),
      block_pool_(plan_.n_blocks, plan_.block_size),
      window_pool_(plan_.n_window_blocks > 0
                       ? std::make_unique<kv::BlockPool>(plan_.n_window_blocks, plan_.block_size)
                       : nullptr),
      kv_storage_(model.kv_cache_shape(plan_.n_blocks, plan_.block_size),
                  plan_.n_window_blocks > 0
                      ? plan_.window_layers
                      : std::vector<bool>(static_cast<size_t>(model.config().n_layers)),
                  plan_.n_window_blocks),
      scheduler_(block_pool_, config.max_num_seqs, config.max_num_batched_tokens,
                 config.prefix_caching),
      disk_cache_(make_disk_cache(config, kv_storage_.shape())),
      remote_cache_(make_remote_cache(config, kv_storage_.shape())),
      salt_hash_(salt_secret()),
      markers_(marker_tokens(tokenizer)),
      kv_reads_(plan_.block_size) {
    if (config.max_num_batched_tokens < config.max_num_seqs) {
        util::fail(
            "--max-num-batched-tokens ({}) must be at least --max-num-seqs ({}), or "
            "decodes would not fit one step",
            config.max_num_batched_tokens, config.max_num_seqs);
    }
    if (window_pool_) scheduler_.set_window_group(window_pool_.get(), plan_.window);
    if (config.speculative) {
        speculator_ = make_speculator(*config.speculative, model, tokenizer, pool, plan_,
                                      config.max_num_batched_tokens);
    }
    if (disk_cache_ || remote_cache_) {
        scheduler_.set_missing_block_loader(
            [this](const kv::BlockHash& hash, std::span<const TokenId> tokens) {
                return load_missing(hash, tokens);
            });
    }
    if (remote_cache_) {
        scheduler_.set_missing_block_lookup(
            {[this](std::span<const kv::BlockHash> hashes) { remote_cache_->begin_lookup(hashes); },
             [this] { remote_cache_->end_lookup(); }});
    }
    refresh_stats();
}

int32_t EngineCore::validate(const RequestParams& params) const {
    const int32_t vocab_size = model_.config().vocab_size;
    auto check_id = [&](TokenId id, const char* what) {
        if (id < 0 || id >= vocab_size) {
            util::fail("{} holds token id {}, outside the vocabulary [0, {})", what, id,
                       vocab_size);
        }
    };
    if (params.prompt.empty()) util::fail("the prompt is empty");
    for (TokenId id : params.prompt) check_id(id, "the prompt");
    if (params.stop->size() > kMaxStopStrings) {
        util::fail("at most {} stop strings (got {})", kMaxStopStrings, params.stop->size());
    }
    for (size_t i = 0; i < params.stop->size(); ++i) {
        if (params.stop->text(i).size() > kMaxStopStringBytes) {
            util::fail("a stop string may be at most {} bytes (got {})", kMaxStopStringBytes,
                       params.stop->text(i).size());
        }
    }
    if (params.stop_token_ids->size() > kMaxStopTokenIds) {
        util::fail("at most {} stop_token_ids (got {})", kMaxStopTokenIds,
                   params.stop_token_ids->size());
    }
    for (TokenId id : *params.stop_token_ids) check_id(id, "stop_token_ids");
    if (params.logit_bias->size() > kMaxLogitBiasEntries) {
        util::fail("logit_bias may hold at most {} tokens (got {})", kMaxLogitBiasEntries,
                   params.logit_bias->size());
    }
    for (const auto& [id, bias] : *params.logit_bias) {
        check_id(id, "logit_bias");
        if (!(bias >= -kMaxLogitBias && bias <= kMaxLogitBias)) {
            util::fail("logit_bias values must be in [-100, 100] (got {} for token {})", bias, id);
        }
    }
    engine::validate(params.sampling);
    if (params.logprobs && (*params.logprobs < 0 || *params.logprobs > kMaxLogprobs)) {
        util::fail("logprobs must be in [0, {}] (got {})", kMaxLogprobs, *params.logprobs);
    }
    const auto n_prompt = static_cast<int64_t>(params.prompt.size());
    // A request must fit the context and, alone, the whole KV cache: then it
    // can always finish, preempting others if it must.
    const int64_t limit = std::min<int64_t>(plan_.max_model_len, plan_.n_tokens());
    const char* limit_name = limit == plan_.max_model_len ? "the context limit" : "the KV cache";
    if (params.max_tokens && *params.max_tokens < 1) {
        util::fail("max_tokens must be at least 1 (got {})", *params.max_tokens);
    }
    if (n_prompt >= limit) {
        util::fail("the prompt has {} tokens; {} is {} tokens, prompt and output included",
                   n_prompt, limit_name, limit);
    }
    if (params.max_tokens && n_prompt + *params.max_tokens > limit) {
        util::fail("the prompt ({} tokens) plus max_tokens ({}) exceeds {} of {} tokens", n_prompt,
                   *params.max_tokens, limit_name, limit);
    }
    return params.max_tokens.value_or(static_cast<int32_t>(limit - n_prompt));
}

void EngineCore::add_request(RequestId id, RequestParams params, OutputSink sink) {
    const int32_t max_tokens = validate(params);
    LADDER_CHECK(!sequences_.contains(id), "request id submitted twice");
    const double now = util::now_seconds();
    // sink stays here until nothing can throw, so a failure can still be told.
    try {
        auto sequence = std::make_unique<Sequence>(id, std::move(params), max_tokens,
                                                   plan_.block_size, tokenizer_);
        sequence->timings.arrival = now;
        if (prefix_caching_) {
            sequence->salt_keys = salt_keys(sequence->params.cache_salt);
            sequence->update_block_hashes(root_hash_);
        }
        Sequence* added = sequence.get();
        sequences_.emplace(id, std::move(sequence));
        try {
            scheduler_.add(added);
        } catch (...) {
            sequences_.erase(id);
            throw;
        }
        added->sink = std::move(sink);
        request_trace::arrived(*added, trace::enabled() ? trace::now_ns() : 0);
    } catch (const std::exception& error) {
        RequestOutput output;
        output.id = id;
        output.time = now;
        output.timings.arrival = now;
        output.timings.finished = now;
        output.finish_reason = FinishReason::Error;
        output.error = error.what();
        ++stats_.n_failed;
        try {
            sink(std::move(output));
        } catch (...) {
            // Nothing more can be told to a sink that fails on its last output.
        }
    }
    refresh_stats();
}

KeyedHash::Secret EngineCore::salt_secret() const {
    if (remote_cache_ && remote_cache_->startup_secret()) return *remote_cache_->startup_secret();
    if (disk_cache_) return disk_cache_->secret();
    return KeyedHash::random_secret();
}

std::vector<uint64_t> EngineCore::salt_keys(const std::string& cache_salt) const {
    if (cache_salt.empty()) return {};
    const kv::BlockHash key = salt_hash_(cache_salt);
    return {key.low, key.high};
}

void EngineCore::abort(RequestId id) {
    const auto it = sequences_.find(id);
    if (it == sequences_.end()) return;
    Sequence& sequence = *it->second;
    const double now = util::now_seconds();
    RequestOutput output = make_output(sequence, now);
    finish(sequence, output, FinishReason::Abort, now);
    ++stats_.n_aborted;
    sequences_.erase(it);
    refresh_stats();
}

void EngineCore::abort_all() {
    std::vector<RequestId> ids;
    for (const auto& [id, sequence] : sequences_) ids.push_back(id);
    for (RequestId id : ids) abort(id);
}

void EngineCore::step() {
    if (!has_work()) return;
    try {
        run_step();
    } catch (const std::exception& error) {
        // Outside any one sequence (scheduling, the batch, the forward pass):
        // every sequence ends, which releases all their blocks.
        fail_all(error.what());
    }
}

void EngineCore::run_step() {
    const double start = util::now_seconds();
    // Read once: a trace that starts or stops mid-step leaves this step out.
    const bool tracing = trace::enabled();
    auto mark = [tracing] { return tracing ? trace::now_ns() : int64_t{0}; };
    const int64_t step_start = mark();
    if (speculator_) speculator_->propose(scheduler_.running());
    const Schedule& schedule = scheduler_.schedule();
    for (Sequence* sequence : schedule.preempted) request_trace::preempted(*sequence, step_start);
    for (Sequence* sequence : schedule.admitted) {
        if (sequence->timings.first_scheduled == 0.0) sequence->timings.first_scheduled = start;
        // Blocks found in the prefix cache are cached already.
        sequence->n_blocks_offered = sequence->n_computed / plan_.block_size;
        request_trace::admitted(*sequence, step_start);
    }
    for (Sequence* sequence : schedule.preempted) forget_kv(*sequence);
    stats_.n_preemptions += static_cast<int64_t>(schedule.preempted.size());
    LADDER_CHECK(!schedule.chunks.empty(), "a step with work scheduled nothing");
    if (speculator_) speculator_->scheduled(schedule.chunks);

    build_batch(schedule);
    const int64_t trace_forward_start = mark();
    const double forward_start = util::now_seconds();
    const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
    if (logits_.size() < batch_.logit_rows.size() * vocab)
        logits_.resize(batch_.logit_rows.size() * vocab);
    model_.forward(batch_, kv_storage_, pool_,
                   std::span<float>(logits_.data(), batch_.logit_rows.size() * vocab));
    const double forward_end = util::now_seconds();
    const int64_t trace_forward_end = mark();
    if (tracing) {
        trace_chunks(schedule, trace_forward_start, trace_forward_end);
        // Now: the batch's block tables are views of its sequences' tables,
        // and a sequence that finishes this step is gone by trace_step.
        traced_kv_read_ = kv_positions_read();
    }
    sample_ready();
    const double sampling_end = util::now_seconds();
    const int64_t trace_sampling_end = mark();

    for (const ScheduledChunk& chunk : schedule.chunks) commit_computed(chunk);
    finished_.clear();
    finished_.reserve(sampled_.size());  // no allocation below, where a failure is one sequence's
    for (Sampled& s : sampled_) {
        Sequence& sequence = *s.sequence;
        try {
            if (s.failure) std::rethrow_exception(s.failure);
            if (emit_new_tokens(sequence, sampling_end)) finished_.push_back(&sequence);
        } catch (const std::exception& error) {
            if (!sequence.finished) fail(sequence, error.what());
            finished_.push_back(&sequence);
        }
    }
    const int64_t trace_outputs_end = mark();
    for (const ScheduledChunk& chunk : schedule.chunks) {
        Sequence& sequence = *chunk.sequence;
        sequence.draft.clear();
        if (sequence.timings.finished != 0.0) continue;
        if (prefix_caching_) cache_full_blocks(sequence);
        if (window_pool_) release_passed_window_blocks(sequence);
    }
    for (Sequence* sequence : finished_) sequences_.erase(sequence->id);

    ++stats_.n_steps;
    stats_.last_step_tokens = schedule.n_tokens;
    stats_.last_step_sequences = static_cast<int32_t>(schedule.chunks.size());
    stats_.last_step_logit_rows = static_cast<int32_t>(batch_.logit_rows.size());
    stats_.last_forward_seconds = forward_end - forward_start;
    stats_.last_sampling_seconds = sampling_end - forward_end;
    if (speculator_) speculator_->observe_step(batch_shape(), sampling_end - forward_start);
    refresh_stats();
    stats_.last_step_seconds = util::now_seconds() - start;
    stats_.last_overhead_seconds =
        stats_.last_step_seconds - stats_.last_forward_seconds - stats_.last_sampling_seconds;
    stats_.forward_seconds += stats_.last_forward_seconds;
    stats_.sampling_seconds += stats_.last_sampling_seconds;
    stats_.overhead_seconds += stats_.last_overhead_seconds;
    if (tracing) {
        trace_step({step_start, trace_forward_start, trace_forward_end, trace_sampling_end,
                    trace_outputs_end, mark()});
    }
}

void EngineCore::trace_chunks(const Schedule& schedule, int64_t forward_start,
                              int64_t forward_end) {
    for (const ScheduledChunk& chunk : schedule.chunks) {
        Sequence& sequence = *chunk.sequence;
        // Before commit_computed: n_computed is where this chunk began. One
        // new token after the first is a decode; anything more a prefill.
        const bool prefill =
            sequence.n_generated() == 0 || sequence.n_computed < sequence.n_tokens() - 1;
        request_trace::computed(sequence, chunk.n_tokens, prefill, forward_start, forward_end);
    }
}

void EngineCore::trace_step(const StepMarks& marks) {
    trace::complete("step", "step", marks.start, marks.end,
                    {{"step", stats_.n_steps},
                     {"tokens", stats_.last_step_tokens},
                     {"sequences", stats_.last_step_sequences},
                     {"logit_rows", stats_.last_step_logit_rows},
                     {"context", static_cast<int64_t>(batch_shape().n_context)},
                     {"decode_context", static_cast<int64_t>(decode_context())},
                     {"kv_read", static_cast<int64_t>(traced_kv_read_)}});
    trace::complete("step", "schedule", marks.start, marks.forward_start);
    trace::complete("step", "forward", marks.forward_start, marks.forward_end);
    trace::complete("step", "sample", marks.forward_end, marks.sampling_end);
    trace::complete("step", "detokenize_stop", marks.sampling_end, marks.outputs_end);
    trace::counter("engine", marks.end,
                   {{"running", stats_.n_running},
                    {"waiting", stats_.n_waiting},
                    {"kv_blocks_used", stats_.n_blocks_used},
                    {"step_tokens", stats_.last_step_tokens},
                    {"prefix_hit_tokens", stats_.n_prefix_hit_tokens}});
}

void EngineCore::build_batch(const Schedule& schedule) {
    batch_.clear();
    sampled_.clear();
    for (const ScheduledChunk& chunk : schedule.chunks) {
        Sequence& sequence = *chunk.sequence;
        const int32_t first_row = batch_.n_tokens();
        const int32_t end = sequence.n_computed + chunk.n_tokens;
        const int32_t first_draft = end - chunk.n_draft;
        for (int32_t position = sequence.n_computed; position < end; ++position) {
            batch_.tokens.push_back(
                position < first_draft
                    ? sequence.tokens[static_cast<size_t>(position)]
                    : sequence.draft.tokens[static_cast<size_t>(position - first_draft)]);
            batch_.positions.push_back(position);
            batch_.slots.push_back(sequence.blocks.slot(position));
            if (window_pool_) batch_.window_slots.push_back(sequence.window_blocks.slot(position));
        }
        batch_.sequences.push_back({first_row, chunk.n_tokens, end, sequence.blocks.blocks(),
                                    sequence.window_blocks.blocks()});
        // Only a sequence whose every token is now computed samples a new one
        // (a prompt chunk short of the end needs no logits). Its last token's
        // row and each drafted token's row predict the next position.
        if (first_draft == sequence.n_tokens()) {
            const int32_t n_rows = chunk.n_draft + 1;
            sampled_.push_back({&sequence, static_cast<int32_t>(batch_.logit_rows.size()), n_rows,
                                nullptr});
            for (int32_t row = first_draft - 1; row < end; ++row) {
                batch_.logit_rows.push_back(first_row + (row - sequence.n_computed));
            }
        }
    }
}

StepShape EngineCore::batch_shape() const {
    StepShape shape;
    shape.n_rows = batch_.n_tokens();
    for (const int32_t position : batch_.positions) shape.n_context += position + 1;
    return shape;
}

double EngineCore::decode_context() const {
    double n_context = 0.0;
    for (const model::BatchSequence& sequence : batch_.sequences) {
        if (sequence.n_tokens == 1) n_context += sequence.n_context;
    }
    return n_context;
}

double EngineCore::kv_positions_read() {
    for (const model::BatchSequence& sequence : batch_.sequences)
        kv_reads_.add(sequence.block_table, sequence.n_context);
    return kv_reads_.take_positions();
}

void EngineCore::sample_ready() {
    const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
    // Each sequence has its own sampler, whose draws depend on its seed and
    // the position alone, so sampling them in parallel gives the same tokens
    // as one by one.
    // A task must not throw (the pool has nowhere to send it): a failure is
    // kept for the emit loop, which ends just that sequence. Its drafts count
    // as rejected and its tokens are left as they were.
    pool_.parallel_for(static_cast<int64_t>(sampled_.size()), [&](int64_t i) {
        Sampled& s = sampled_[static_cast<size_t>(i)];
        Sequence& sequence = *s.sequence;
        const size_t n_tokens_before = sequence.tokens.size();
        try {
            const size_t first = static_cast<size_t>(s.first_logit_row) * vocab;
            verify_step(sequence,
                        std::span<float>(logits_.data() + first,
                                         static_cast<size_t>(s.n_rows) * vocab),
                        vocab);
        } catch (...) {
            s.failure = std::current_exception();
            sequence.tokens.resize(n_tokens_before);
            sequence.new_tokens.clear();
            sequence.new_logprobs.clear();
            sequence.n_accepted_drafts = 0;
            sequence.constraint_refused = false;
        }
    });
}

void EngineCore::commit_computed(const ScheduledChunk& chunk) {
    Sequence& sequence = *chunk.sequence;
    // Of the drafted rows only the accepted ones hold this sequence's KV.
    const bool sampled = sequence.n_computed + chunk.n_tokens - chunk.n_draft == sequence.n_tokens();
    const int32_t n_rejected = sampled ? chunk.n_draft - sequence.n_accepted_drafts : 0;
    sequence.n_computed += chunk.n_tokens - n_rejected;
    if (n_rejected > 0) {
        // Their blocks go back; a block partly filled with rejected rows is
        // rewritten by the right tokens before it can fill and be cached.
        sequence.blocks.shrink_to(sequence.n_computed, block_pool_);
        if (window_pool_) sequence.window_blocks.shrink_to(sequence.n_computed, *window_pool_);
    }
    if (speculator_ && sampled) speculator_->verified(sequence, sequence.n_tokens());
}

bool EngineCore::emit_new_tokens(Sequence& sequence, double now) {
    for (size_t i = 0; i < sequence.new_tokens.size(); ++i) {
        TokenLogprob* logprob = sequence.params.logprobs ? &sequence.new_logprobs[i] : nullptr;
        // A grammar ends by accepting its stop token: the last new one.
        const bool constraint_ended = i + 1 == sequence.new_tokens.size() && sequence.constraint &&
                                      sequence.constraint->is_terminated();
        if (emit_token(sequence, sequence.new_tokens[i], logprob, constraint_ended, now)) {
            return true;
        }
    }
    if (!sequence.constraint_refused) return false;
    // The constraint allowed nothing it was offered: nothing more can follow.
    RequestOutput output = make_output(sequence, now);
    StopMatcher::Result rest = sequence.stop_matcher.push(sequence.detokenizer.flush());
    output.text = rest.text;
    if (!rest.stopped) output.text += sequence.stop_matcher.flush();
    finish(sequence, output, FinishReason::Stop, now);
    ++stats_.n_finished;
    return true;
}

void EngineCore::forget_kv(Sequence& sequence) {
    sequence.n_blocks_offered = 0;
    if (speculator_) speculator_->released(sequence, false);
}

void EngineCore::cache_full_blocks(Sequence& sequence) {
    const int32_t block_size = plan_.block_size;
    const int32_t end = std::min(sequence.n_computed / block_size,
                                 static_cast<int32_t>(sequence.block_hashes.size()));
    for (int32_t index = sequence.n_blocks_offered; index < end; ++index) {
        const std::span<const TokenId> tokens = sequence.block_tokens(static_cast<size_t>(index));
        const kv::BlockId block = sequence.blocks.blocks()[static_cast<size_t>(index)];
        const kv::BlockHash& hash = sequence.block_hashes[static_cast<size_t>(index)];
        // The window group's copy of the block too: a later prompt needs both.
        if (window_pool_ && sequence.window_blocks.blocks()[static_cast<size_t>(index)] !=
                                kv::kReleased) {
            window_pool_->cache_block(sequence.window_blocks.blocks()[static_cast<size_t>(index)],
                                      hash, tokens);
        }
        // Only a new cached copy goes to the tiers below; the disk tier skips
        // what it has.
        if (block_pool_.cache_block(block, hash, tokens)) {
            if (disk_cache_) disk_cache_->store(hash, tokens, kv_storage_, block);
            if (remote_cache_) remote_cache_->store(hash, tokens, kv_storage_, block);
        }
    }
    sequence.n_blocks_offered = std::max(sequence.n_blocks_offered, end);
}

void EngineCore::release_passed_window_blocks(Sequence& sequence) {
    // The next token, at position n_computed, sees n_computed - window + 1 on.
    const int32_t first_visible = std::max(0, sequence.n_computed - plan_.window + 1);
    sequence.window_blocks.release_before(first_visible / plan_.block_size, *window_pool_);
}

std::optional<kv::BlockId> EngineCore::load_missing(const kv::BlockHash& hash,
                                                    std::span<const TokenId> tokens) {
    // Memory, then disk (local, and its index says at once whether it has
    // the block), then the remote tier (a network round trip).
    const bool on_disk = disk_cache_ && disk_cache_->contains(hash);
    if (block_pool_.n_free() == 0 || (!on_disk && !remote_cache_)) return std::nullopt;
    const kv::BlockId block = block_pool_.allocate();
    bool loaded = on_disk && disk_cache_->load(hash, tokens, kv_storage_, block);
    if (!loaded && remote_cache_) {
        loaded = remote_cache_->load(hash, tokens, kv_storage_, block);
        // Kept on disk too, so a restart does not need the network for it.
        if (loaded && disk_cache_) disk_cache_->store(hash, tokens, kv_storage_, block);
    }
    if (!loaded) {
        block_pool_.release(block);
        return std::nullopt;
    }
    block_pool_.cache_block(block, hash, tokens);
    return block;
}

bool EngineCore::emit_token(Sequence& sequence, TokenId token, TokenLogprob* logprob,
                            bool constraint_ended, double now) {
    sequence.tokens.push_back(token);
    if (prefix_caching_) sequence.update_block_hashes(root_hash_);
    ++stats_.n_generated_tokens;
    if (sequence.timings.first_token == 0.0) {
        sequence.timings.first_token = now;
        stats_.n_prompt_tokens += sequence.n_prompt_tokens;
    }
    RequestOutput output = make_output(sequence, now);
    output.token_ids.push_back(token);
    if (logprob != nullptr) output.logprobs.push_back(std::move(*logprob));

    // A grammar ends on an end-of-generation token, which is not text either.
    const bool end_token =
        constraint_ended ||
        (!sequence.params.ignore_eos && tokenizer_.is_end_of_generation(token)) ||
        sequence.params.stop_token_ids->contains(token);
    std::optional<FinishReason> reason;
    bool stop_string_found = false;
    if (end_token) {
        reason = FinishReason::Stop;  // the end token itself is not text
    } else {
        StopMatcher::Result released = sequence.stop_matcher.push(detokenize(sequence, token));
        output.text = std::move(released.text);
        stop_string_found = released.stopped;
        if (stop_string_found) reason = FinishReason::Stop;
    }
    // A grammar that has ended ends the request; its last token is text.
    if (!reason && sequence.constraint && sequence.constraint->is_terminated())
        reason = FinishReason::Stop;
    if (!reason && sequence.n_generated() >= sequence.max_tokens) reason = FinishReason::Length;
    if (!reason) {
        sequence.sink(std::move(output));
        return false;
    }
    if (!stop_string_found) {
        // Ended without a stop string: what was held back is text after all.
        StopMatcher::Result rest = sequence.stop_matcher.push(sequence.detokenizer.flush());
        output.text += rest.text;
        if (!rest.stopped) output.text += sequence.stop_matcher.flush();
    }
    finish(sequence, output, *reason, now);
    ++stats_.n_finished;
    return true;
}

std::string EngineCore::detokenize(Sequence& sequence, TokenId token) {
    // A marker (a control token parsers read) is its text; the bytes of a
    // character it interrupted can never complete.
    if (std::find(markers_.begin(), markers_.end(), token) != markers_.end()) {
        return sequence.detokenizer.flush() + tokenizer_.token_to_piece(token, true);
    }
    return sequence.detokenizer.push(token);
}

void EngineCore::finish(Sequence& sequence, RequestOutput& output, FinishReason reason,
                        double now) {
    // The blocks it filled this step are offered before they are freed.
    if (prefix_caching_) cache_full_blocks(sequence);
    if (speculator_) speculator_->released(sequence, true);
    scheduler_.remove(&sequence);
    sequence.finished = true;
    sequence.timings.finished = now;
    output.timings = sequence.timings;
    output.finish_reason = reason;
    request_trace::finished(sequence, reason, trace::enabled() ? trace::now_ns() : 0);
    try {
        sequence.sink(std::move(output));
    } catch (...) {
        // The request has ended either way; a sink that fails on its last
        // output has nothing left to be told.
    }
}

void EngineCore::fail(Sequence& sequence, std::string_view what) {
    const double now = util::now_seconds();
    RequestOutput output = make_output(sequence, now);
    output.error = what;
    finish(sequence, output, FinishReason::Error, now);
    ++stats_.n_failed;
}

void EngineCore::fail_all(std::string_view what) {
    for (auto& [id, sequence] : sequences_) {
        if (!sequence->finished) fail(*sequence, what);
    }
    sequences_.clear();
    refresh_stats();
}

RequestOutput EngineCore::make_output(const Sequence& sequence, double now) const {
    RequestOutput output;
    output.id = sequence.id;
    output.time = now;
    output.n_prompt_tokens = sequence.n_prompt_tokens;
    output.n_generated_tokens = sequence.n_generated();
    output.n_cached_prompt_tokens = sequence.n_cached_prompt_tokens;
    output.n_preemptions = sequence.n_preemptions;
    output.timings = sequence.timings;
    return output;
}

void EngineCore::refresh_stats() {
    stats_.n_running = scheduler_.n_running();
    stats_.n_waiting = scheduler_.n_waiting();
    stats_.n_blocks = block_pool_.n_blocks();
    stats_.n_blocks_used = block_pool_.n_used();
    stats_.n_block_size = plan_.block_size;
    int64_t n_kv_tokens = 0;
    for (const auto& [id, sequence] : sequences_) n_kv_tokens += sequence->n_computed;
    stats_.n_kv_tokens = n_kv_tokens;
    stats_.n_blocks_cached = block_pool_.n_cached();
    if (window_pool_) {
        stats_.n_window_blocks = window_pool_->n_blocks();
        stats_.n_window_blocks_used = window_pool_->n_used();
    }
    stats_.n_prefix_queried_tokens = scheduler_.n_prefix_queried_tokens();
    stats_.n_prefix_hit_tokens = scheduler_.n_prefix_hit_tokens();
    if (speculator_) stats_.spec_decode = speculator_->stats();
    if (disk_cache_) {
        const DiskKvCacheStats disk = disk_cache_->stats();
        stats_.n_disk_blocks_loaded = disk.n_loaded;
        stats_.n_disk_blocks_written = disk.n_written;
        stats_.n_disk_files = disk.n_files;
    }
    if (remote_cache_) stats_.remote = remote_cache_->stats();
}

}  // namespace ladder::engine
