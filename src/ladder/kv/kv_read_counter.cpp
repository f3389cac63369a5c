#include "ladder/kv/kv_read_counter.h"

#include <algorithm>

#include "ladder/kv/block_table.h"

namespace ladder::kv {

void KvReadCounter::add(std::span<const BlockId> blocks, int32_t n_context) {
    const int32_t n_blocks =
        std::min((n_context + block_size_ - 1) / block_size_, static_cast<int32_t>(blocks.size()));
    for (int32_t i = 0; i < n_blocks; ++i) {
        const BlockId block = blocks[static_cast<size_t>(i)];
        if (block == kReleased) continue;
        const auto index = static_cast<size_t>(block);
        if (index >= counted_in_step_.size()) counted_in_step_.resize(index + 1, 0);
        if (counted_in_step_[index] == step_) continue;
        counted_in_step_[index] = step_;
        positions_ += std::min(block_size_, n_context - i * block_size_);
    }
}

double KvReadCounter::take_positions() {
    const double positions = positions_;
    positions_ = 0.0;
    if (++step_ == 0) {  // wrapped: no mark may match a step again
        std::fill(counted_in_step_.begin(), counted_in_step_.end(), 0);
        step_ = 1;
    }
    return positions;
}

}  // namespace ladder::kv
