// The engine's record of one request: its tokens, how many of them are in the
// KV cache, its blocks, and the per-request state of sampling and text. Plain
// data the scheduler and the engine step share; owned by the engine thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "ladder/engine/draft.h"
#include "ladder/engine/request.h"
#include "ladder/engine/sampler.h"
#include "ladder/engine/stop_matcher.h"
#include "ladder/engine/token_constraint.h"
#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_table.h"
#include "ladder/tokenizer/tokenizer.h"

namespace ladder::engine {

// Receives a request's outputs, on the engine thread. Must be quick.
using OutputSink = std::function<void(RequestOutput&&)>;

// What the open trace shows of a request so far (request_trace.h).
struct RequestTraceMarks {
    uint32_t session = 0;  // the trace its span was opened in; 0: none
    bool queued = false;
    bool decoding = false;
    bool flow_started = false;
};

struct Sequence {
    // The sink is set once the sequence is registered (EngineCore::add_request),
    // so that a failure before that can still report through it.
    Sequence(RequestId id, RequestParams params, int32_t max_tokens, int32_t block_size,
             const tokenizer::Tokenizer& tokenizer)
        : id(id),
          n_prompt_tokens(static_cast<int32_t>(params.prompt.size())),
          max_tokens(max_tokens),
          tokens(std::move(params.prompt)),
          blocks(block_size),
          window_blocks(block_size),
          sampler(params.sampling),
          constraint(params.make_constraint ? params.make_constraint() : nullptr),
          detokenizer(tokenizer),
          stop_matcher(params.stop),
          params(std::move(params)) {}

    // Tokens still to be computed into the KV cache. A running sequence always
    // has at least one: its last sampled token is computed in the next step.
    int32_t n_uncomputed() const { return n_tokens() - n_computed; }
    int32_t n_tokens() const { return static_cast<int32_t>(tokens.size()); }
    int32_t n_generated() const { return n_tokens() - n_prompt_tokens; }
    // The tokens of full block `index`.
    std::span<const TokenId> block_tokens(size_t index) const {
        const auto block_size = static_cast<size_t>(blocks.block_size());
        return {tokens.data() + index * block_size, block_size};
    }
    // Hashes every full block of tokens not hashed yet. The first block
    // carries the cache salt's key, and through the chain every block does.
    void update_block_hashes(const kv::BlockHash& root) {
        const int32_t block_size = blocks.block_size();
        while (static_cast<int32_t>(block_hashes.size()) < n_tokens() / block_size) {
            const size_t index = block_hashes.size();
            block_hashes.push_back(index == 0
                                       ? kv::hash_block(root, block_tokens(0), salt_keys)
                                       : kv::hash_block(block_hashes.back(), block_tokens(index)));
        }
    }

    RequestId id;
    int32_t n_prompt_tokens;
    int32_t max_tokens;           // resolved against the context limit
    std::vector<TokenId> tokens;  // prompt, then generated
    int32_t n_computed = 0;       // tokens whose K/V are in the cache
    int32_t n_cached_prompt_tokens = 0;
    kv::BlockTable blocks;
    kv::BlockTable window_blocks;  // the sliding-window layers' own, when the cache has that group
    Sampler sampler;
    // Null without one. Kept across a preemption, like the sampler: the
    // tokens it accepted stay the sequence's.
    std::unique_ptr<TokenConstraint> constraint;
    tokenizer::StreamingDetokenizer detokenizer;
    StopMatcher stop_matcher;
    RequestParams params;  // prompt moved out into tokens
    OutputSink sink;
    bool finished = false;  // its last output was sent; it is about to be erased
    // The keyed hash of params.cache_salt as block-hash extra keys; empty
    // when unsalted.
    std::vector<uint64_t> salt_keys;
    int32_t n_preemptions = 0;
    RequestTimings timings;
    // Chained hashes of the full blocks of tokens (prefix caching), kept up
    // to date as tokens are added.
    std::vector<kv::BlockHash> block_hashes;
    std::vector<float> raw_logits;  // scratch: the logits before sampling, for logprobs
    // Full blocks already offered to the prefix cache (reset when the KV is freed).
    int32_t n_blocks_offered = 0;

    // Speculative decoding: this step's proposal (empty when not speculating)
    // and how earlier proposals fared.
    DraftProposal draft;
    AcceptanceHistory acceptance;
    // Scratch of one step: the tokens verification produced (drafts the
    // target accepted, then its own next token), with their logprobs.
    std::vector<TokenId> new_tokens;
    std::vector<TokenLogprob> new_logprobs;
    int32_t n_accepted_drafts = 0;
    bool constraint_refused = false;  // the constraint allowed no token it was given
    std::vector<TokenProbability> residual_scratch;
    RequestTraceMarks trace;
};

}  // namespace ladder::engine
