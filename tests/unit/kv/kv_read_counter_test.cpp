// The distinct KV positions a step reads: what `ladder simulate` and the
// engine's trace price as memory traffic.
#include <gtest/gtest.h>

#include <vector>

#include "ladder/kv/block_table.h"
#include "ladder/kv/kv_read_counter.h"

namespace ladder::kv {
namespace {

TEST(KvReadCounter, ABlockSharedBySequencesIsReadOnce) {
    KvReadCounter counter(4);
    // Two sequences on one cached prefix (blocks 7 and 3), then blocks of their own.
    const std::vector<BlockId> a = {7, 3, 10};
    const std::vector<BlockId> b = {7, 3, 11, 12};
    counter.add(a, 10);  // 4 + 4 + 2 positions
    counter.add(b, 13);  // the prefix again, then 4 + 1 of its own
    EXPECT_DOUBLE_EQ(counter.take_positions(), 10.0 + 5.0);
}

TEST(KvReadCounter, EachStepCountsAfresh) {
    KvReadCounter counter(4);
    const std::vector<BlockId> a = {0, 1};
    counter.add(a, 5);
    EXPECT_DOUBLE_EQ(counter.take_positions(), 5.0);
    counter.add(a, 6);
    EXPECT_DOUBLE_EQ(counter.take_positions(), 6.0);
    EXPECT_DOUBLE_EQ(counter.take_positions(), 0.0);
}

TEST(KvReadCounter, BlocksPastTheContextAndReleasedOnesAreNotRead) {
    KvReadCounter counter(4);
    // A sliding window gave back the first block; a block grown ahead of the
    // positions attended is not read.
    const std::vector<BlockId> table = {kReleased, 5, 6, 8};
    counter.add(table, 9);
    EXPECT_DOUBLE_EQ(counter.take_positions(), 4.0 + 1.0);
}

}  // namespace
}  // namespace ladder::kv
