#include "ladder/tools/sim_kv_tier.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::tools {

SimKvTier::SimKvTier(int64_t capacity_blocks) : capacity_(capacity_blocks) {
    LADDER_CHECK(capacity_blocks >= 1, "a KV tier of no blocks");
}

bool SimKvTier::contains(const kv::BlockHash& hash) {
    const auto found = stamps_.find(hash);
    if (found == stamps_.end()) return false;
    if (holds_stamp(found->second)) return true;
    stamps_.erase(found);
    return false;
}

void SimKvTier::write(const kv::BlockHash& hash) {
    if (contains(hash)) return;
    stamps_[hash] = n_written_++;
    if (stamps_.size() >= sweep_at_) drop_expired();
}

// Hashes written once and never asked for again would otherwise stay:
// sweeping when the map doubles keeps it within twice what the tier holds.
void SimKvTier::drop_expired() {
    std::erase_if(stamps_, [&](const auto& entry) { return !holds_stamp(entry.second); });
    sweep_at_ = std::max<size_t>(1024, 2 * stamps_.size());
}

}  // namespace ladder::tools
