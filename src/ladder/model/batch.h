// The one contract between the engine and a model's forward pass (DESIGN.md):
// a flat, ragged batch of tokens from any number of sequences. There is no
// prefill or decode mode: each sequence brings the tokens it computes this
// step, whatever their number.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ladder::model {

struct BatchSequence {
    int32_t first_row = 0;                 // index of its first token in Batch::tokens
    int32_t n_tokens = 0;                  // tokens it computes this step (rows first_row..)
    int32_t n_context = 0;                 // tokens in its KV after this step (past + n_tokens)
    std::span<const int32_t> block_table;  // KV blocks holding positions 0..n_context-1
    // The sliding-window layers' own blocks, when the cache has that group
    // (KvCacheStorage::has_window_group); entries before the window may be -1.
    std::span<const int32_t> window_block_table;
};

struct Batch {
    std::vector<int32_t> tokens;     // [T] token ids computed this step
    std::vector<int32_t> positions;  // [T] position of each token in its sequence
    std::vector<int64_t>
        slots;  // [T] where each token's K/V is written: block * block_size + offset
    std::vector<int64_t>
        window_slots;  // [T] the same in the sliding-window group, if the cache has one
    std::vector<BatchSequence> sequences;
    std::vector<int32_t> logit_rows;  // rows whose logits are wanted, in output order

    int32_t n_tokens() const { return static_cast<int32_t>(tokens.size()); }
    // Where row's K/V goes for a layer of the given group.
    int64_t slot(int32_t row, bool window_group) const {
        return (window_group ? window_slots : slots)[static_cast<size_t>(row)];
    }
    // Empties the batch but keeps its capacity, so a reused batch does not allocate.
    void clear() {
        tokens.clear();
        positions.clear();
        slots.clear();
        window_slots.clear();
        sequences.clear();
        logit_rows.clear();
    }
};

}  // namespace ladder::model
