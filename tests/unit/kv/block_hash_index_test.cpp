// The prefix cache's flat index against std::unordered_map under a long
// random churn of inserts and erases, with hashes crowded into few home
// slots so that probe chains wrap around the array and erases shift them.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "ladder/kv/block_hash_index.h"

namespace ladder::kv {
namespace {

TEST(BlockHashIndex, MatchesAMapUnderChurn) {
    BlockHashIndex index(64);  // 128 slots
    std::unordered_map<BlockHash, int32_t, BlockHashHasher> reference;
    std::mt19937_64 random(7);
    for (int round = 0; round < 200000; ++round) {
        // Lows near the array's end, so chains wrap past slot 0.
        const BlockHash hash{120 + random() % 16, random() % 40};
        const bool present = reference.contains(hash);
        if (random() % 2 == 0 && reference.size() < 64) {
            const auto block = static_cast<int32_t>(round % 1000);
            EXPECT_EQ(index.insert(hash, block), !present);
            if (!present) reference.emplace(hash, block);
        } else {
            index.erase(hash);
            reference.erase(hash);
        }
        ASSERT_EQ(index.size(), reference.size());
        if (round % 97 == 0) {
            for (const auto& [key, block] : reference) ASSERT_EQ(index.find(key), block);
        }
        const BlockHash probe{120 + random() % 16, random() % 40};
        const auto found = reference.find(probe);
        ASSERT_EQ(index.find(probe),
                  found == reference.end() ? std::nullopt : std::optional(found->second));
    }
}

}  // namespace
}  // namespace ladder::kv
