// The block pool's bookkeeping: exact ids, LRU reuse order, reference counts,
// exhaustion and the all-or-nothing growth of block tables.
#include <gtest/gtest.h>

#include "ladder/kv/block_pool.h"
#include "ladder/kv/block_table.h"

namespace ladder::kv {
namespace {

TEST(BlockPool, HandsOutEveryBlockOnceThenIsEmpty) {
    BlockPool pool(4, 4);
    EXPECT_EQ(pool.n_free(), 4);
    for (BlockId expected = 0; expected < 4; ++expected) EXPECT_EQ(pool.allocate(), expected);
    EXPECT_EQ(pool.n_free(), 0);
    EXPECT_EQ(pool.n_used(), 4);
}

TEST(BlockPool, ReusesTheBlockFreedLongestAgoFirst) {
    BlockPool pool(3, 4);
    const BlockId a = pool.allocate();
    const BlockId b = pool.allocate();
    const BlockId c = pool.allocate();
    pool.release(b);
    pool.release(a);
    pool.release(c);
    EXPECT_EQ(pool.allocate(), b);
    EXPECT_EQ(pool.allocate(), a);
    EXPECT_EQ(pool.allocate(), c);
}

TEST(BlockPool, SharedBlockIsFreedWithItsLastHolder) {
    BlockPool pool(2, 4);
    const BlockId block = pool.allocate();
    pool.retain(block);
    EXPECT_EQ(pool.ref_count(block), 2);
    pool.release(block);
    EXPECT_EQ(pool.n_free(), 1);
    EXPECT_EQ(pool.ref_count(block), 1);
    pool.release(block);
    EXPECT_EQ(pool.n_free(), 2);
    EXPECT_EQ(pool.ref_count(block), 0);
}

TEST(BlockPoolDeathTest, DoubleFreeAborts) {
    BlockPool pool(2, 4);
    const BlockId block = pool.allocate();
    pool.release(block);
    EXPECT_DEATH(pool.release(block), "double free");
}

TEST(BlockPoolDeathTest, AllocatingFromAnEmptyPoolAborts) {
    BlockPool pool(1, 4);
    pool.allocate();
    EXPECT_DEATH(pool.allocate(), "exhausted");
}

TEST(BlockPoolDeathTest, RetainOfAFreeBlockAborts) {
    BlockPool pool(1, 4);
    EXPECT_DEATH(pool.retain(0), "free block");
    EXPECT_DEATH(pool.release(7), "outside the pool");
}

TEST(BlockTable, GrowsByWholeBlocksAndMapsPositionsToSlots) {
    BlockPool pool(8, 4);
    pool.allocate();  // block 0 taken by someone else
    BlockTable table(4);
    ASSERT_TRUE(table.grow_to(5, pool));
    ASSERT_EQ(table.n_blocks(), 2);
    EXPECT_EQ(table.blocks()[0], 1);
    EXPECT_EQ(table.blocks()[1], 2);
    EXPECT_EQ(table.slot(0), 4);
    EXPECT_EQ(table.slot(3), 7);
    EXPECT_EQ(table.slot(4), 8);
    ASSERT_TRUE(table.grow_to(8, pool));  // still fits two blocks
    EXPECT_EQ(table.n_blocks(), 2);
    EXPECT_EQ(table.blocks_missing(9), 1);
}

TEST(BlockTable, GrowthIsAllOrNothingWhenThePoolIsShort) {
    BlockPool pool(3, 4);
    BlockTable table(2);
    ASSERT_TRUE(table.grow_to(2, pool));
    EXPECT_FALSE(table.grow_to(7, pool));  // needs 3 more, 2 free
    EXPECT_EQ(table.n_blocks(), 1);
    EXPECT_EQ(pool.n_free(), 2);
}

TEST(BlockTable, ReleaseAllReturnsEveryBlockLastFirst) {
    BlockPool pool(4, 4);
    BlockTable table(1);
    ASSERT_TRUE(table.grow_to(3, pool));
    table.release_all(pool);
    EXPECT_EQ(table.n_blocks(), 0);
    EXPECT_EQ(pool.n_free(), 4);
    // Block 3 was never used, then 2, 1, 0 in that order: the first block of
    // the sequence is the last to be reused.
    EXPECT_EQ(pool.allocate(), 3);
    EXPECT_EQ(pool.allocate(), 2);
    EXPECT_EQ(pool.allocate(), 1);
    EXPECT_EQ(pool.allocate(), 0);
}

}  // namespace
}  // namespace ladder::kv
