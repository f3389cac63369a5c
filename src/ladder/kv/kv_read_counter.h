// The KV positions a step reads, counting a block once however many of the
// step's sequences attend to it (a cached prefix shared by many decodes is
// read from memory once and from the caches after). The engine's trace and
// `ladder simulate` both count a step this way, so a profile fitted on one
// prices the other.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ladder/kv/block_pool.h"

namespace ladder::kv {

class KvReadCounter {
public:
    explicit KvReadCounter(int32_t block_size) : block_size_(block_size) {}

    // A sequence whose rows attend to positions [0, n_context) held in
    // `blocks` (its block table; released entries are skipped). A block
    // another sequence of the step added already is not counted again: only
    // full blocks are shared (the prefix cache holds no partial one), so every
    // sequence that has it uses all of its positions.
    void add(std::span<const BlockId> blocks, int32_t n_context);
    // The step's count; the next add() begins the next step's.
    double take_positions();

private:
    int32_t block_size_;
    double positions_ = 0.0;
    uint32_t step_ = 1;
    std::vector<uint32_t> counted_in_step_;  // by block id: the step that counted it
};

}  // namespace ladder::kv
