#include "ladder/engine/speculator.h"

#include <algorithm>

#include "ladder/engine/draft_model_drafter.h"
#include "ladder/engine/ngram_drafter.h"
#include "ladder/engine/suffix_drafter.h"

namespace ladder::engine {

Speculator::Speculator(const SpeculativeConfig& config, std::unique_ptr<Drafter> drafter,
                       int32_t max_num_batched_tokens)
    : config_(config), drafter_(std::move(drafter)), max_num_batched_tokens_(max_num_batched_tokens) {
    stats_.n_accepted_per_position.assign(static_cast<size_t>(config.num_speculative_tokens), 0);
}

void Speculator::propose(std::span<Sequence* const> running) {
    decoding_.clear();
    candidates_.clear();
    // The step without drafts, as the scheduler is about to build it: one
    // row per decode, then prompt chunks in running order under the budget.
    StepShape base;
    double n_base_tokens = 0.0;
    for (Sequence* sequence : running) {
        sequence->draft.clear();
        if (sequence->n_uncomputed() != 1) continue;
        base.n_rows += 1.0;
        base.n_context += sequence->n_tokens();
        n_base_tokens += 1.0;
        // No draft past max_tokens (the target's token after the last draft,
        // when all are accepted, is then dropped: the request ends there).
        const int32_t max_tokens = std::min(config_.num_speculative_tokens,
                                            sequence->max_tokens - sequence->n_generated());
        if (max_tokens <= 0) continue;
        decoding_.push_back(sequence);
        candidates_.push_back({SpeculationPolicy::acceptance(sequence->acceptance),
                               static_cast<double>(sequence->n_tokens()), max_tokens});
    }
    double budget = max_num_batched_tokens_ - base.n_rows;
    for (const Sequence* sequence : running) {
        if (sequence->n_uncomputed() <= 1 || budget <= 0.0) continue;
        const double rows = std::min<double>(sequence->n_uncomputed(), budget);
        base.n_rows += rows;
        base.n_context += rows * (sequence->n_computed + (rows + 1.0) / 2.0);
        budget -= rows;
    }
    lengths_.assign(candidates_.size(), 0);
    if (config_.adaptive) {
        policy_.plan(candidates_, base, n_base_tokens, step_cost_, drafter_->step_cost(), lengths_);
    } else {
        for (size_t i = 0; i < candidates_.size(); ++i) lengths_[i] = candidates_[i].max_tokens;
    }

    requests_.clear();
    for (size_t i = 0; i < decoding_.size(); ++i) {
        if (lengths_[i] > 0) requests_.push_back({decoding_[i], lengths_[i]});
    }
    if (!requests_.empty()) drafter_->propose(requests_);
    for (Sequence* sequence : decoding_) {
        if (sequence->draft.empty()) SpeculationPolicy::record_idle(sequence->acceptance);
    }
}

void Speculator::scheduled(std::span<const ScheduledChunk> chunks) {
    prompts_.clear();
    for (const ScheduledChunk& chunk : chunks) {
        if (chunk.n_draft == 0 && chunk.n_tokens > 1) {
            prompts_.push_back({chunk.sequence, chunk.n_tokens});
        }
    }
    if (!prompts_.empty()) drafter_->follow_prompts(prompts_);
}

void Speculator::verified(Sequence& sequence, int32_t n_before) {
    const int32_t n_drafted = sequence.draft.size();
    if (n_drafted == 0) return;
    const int32_t n_accepted = sequence.n_accepted_drafts;
    ++stats_.n_drafts;
    stats_.n_draft_tokens += n_drafted;
    stats_.n_accepted_tokens += n_accepted;
    for (int32_t i = 0; i < n_accepted; ++i) ++stats_.n_accepted_per_position[static_cast<size_t>(i)];
    SpeculationPolicy::record(sequence.acceptance, n_drafted, n_accepted);
    drafter_->on_verified(sequence, n_before, n_drafted, n_accepted);
}

void Speculator::released(Sequence& sequence, bool finished) {
    drafter_->on_released(sequence, finished);
    sequence.draft.clear();
}

std::unique_ptr<Speculator> make_speculator(const SpeculativeConfig& config, model::Model& target,
                                            const tokenizer::Tokenizer& tokenizer,
                                            util::ThreadPool& pool, const KvCachePlan& plan,
                                            int32_t max_num_batched_tokens) {
    validate(config);
    std::unique_ptr<Drafter> drafter;
    switch (config.method) {
        case SpeculativeMethod::Ngram:
            drafter = std::make_unique<NgramDrafter>(config.prompt_lookup_min,
                                                     config.prompt_lookup_max);
            break;
        case SpeculativeMethod::Suffix:
            drafter = std::make_unique<SuffixDrafter>(config);
            break;
        case SpeculativeMethod::DraftModel:
            drafter = std::make_unique<DraftModelDrafter>(config.model, target, tokenizer, pool,
                                                          plan, max_num_batched_tokens);
            break;
    }
    return std::make_unique<Speculator>(config, std::move(drafter), max_num_batched_tokens);
}

}  // namespace ladder::engine
