// The prefix cache inside the block pool: exact ids on hits, plain blocks
// used before cached ones, LRU eviction, and no sharing on a hash collision.
#include <gtest/gtest.h>

#include <vector>

#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_pool.h"

namespace ladder::kv {
namespace {

const std::vector<int32_t> kTokensA{1, 2, 3, 4};
const std::vector<int32_t> kTokensB{5, 6, 7, 8};

TEST(BlockHash, ChainsDependOnParentAndTokens) {
    const BlockHash root = root_hash(0);
    EXPECT_EQ(hash_block(root, kTokensA), hash_block(root, kTokensA));
    EXPECT_NE(hash_block(root, kTokensA), hash_block(root, kTokensB));
    EXPECT_NE(hash_block(root, kTokensA), hash_block(hash_block(root, kTokensB), kTokensA));
    EXPECT_NE(hash_block(root_hash(0), kTokensA), hash_block(root_hash(1), kTokensA));
}

TEST(PrefixCache, ReleasedCachedBlockIsFoundAndTakenAgain) {
    BlockPool pool(4, 4);
    const BlockHash hash = hash_block(root_hash(0), kTokensA);
    const BlockId block = pool.allocate();
    pool.cache_block(block, hash, kTokensA);
    pool.release(block);
    EXPECT_EQ(pool.n_free(), 4);  // cached blocks still count as available
    EXPECT_EQ(pool.n_cached(), 1);
    const auto hit = pool.take_cached(hash, kTokensA);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(*hit, block);
    EXPECT_EQ(pool.ref_count(block), 1);
    EXPECT_EQ(pool.n_free(), 3);
    // A second holder shares it.
    EXPECT_EQ(pool.take_cached(hash, kTokensA), block);
    EXPECT_EQ(pool.ref_count(block), 2);
}

TEST(PrefixCache, CollisionNeverSharesABlock) {
    BlockPool pool(2, 4);
    const BlockHash hash = hash_block(root_hash(0), kTokensA);
    const BlockId block = pool.allocate();
    pool.cache_block(block, hash, kTokensA);
    EXPECT_FALSE(pool.take_cached(hash, kTokensB).has_value());
    EXPECT_FALSE(pool.take_cached(hash_block(root_hash(0), kTokensB), kTokensB).has_value());
}

TEST(PrefixCache, PlainBlocksGoFirstThenTheLeastRecentlyReleasedCachedOne) {
    BlockPool pool(3, 4);
    const BlockId a = pool.allocate();
    const BlockId b = pool.allocate();
    const BlockHash hash_a = hash_block(root_hash(0), kTokensA);
    const BlockHash hash_b = hash_block(root_hash(0), kTokensB);
    pool.cache_block(a, hash_a, kTokensA);
    pool.cache_block(b, hash_b, kTokensB);
    pool.release(b);
    pool.release(a);
    const BlockId plain = pool.allocate();
    EXPECT_NE(plain, a);
    EXPECT_NE(plain, b);
    EXPECT_EQ(pool.n_cached(), 2);
    EXPECT_EQ(pool.allocate(), b);  // released first, evicted first
    EXPECT_EQ(pool.n_evictions(), 1);
    EXPECT_FALSE(pool.take_cached(hash_b, kTokensB).has_value());
    EXPECT_EQ(pool.take_cached(hash_a, kTokensA), a);
}

TEST(PrefixCache, DuplicateContentKeepsTheFirstCopy) {
    BlockPool pool(2, 4);
    const BlockHash hash = hash_block(root_hash(0), kTokensA);
    const BlockId first = pool.allocate();
    const BlockId second = pool.allocate();
    pool.cache_block(first, hash, kTokensA);
    pool.cache_block(second, hash, kTokensA);
    EXPECT_TRUE(pool.is_cached(first));
    EXPECT_FALSE(pool.is_cached(second));
    pool.release(second);
    pool.release(first);
    EXPECT_EQ(pool.allocate(), second);  // the anonymous one is plain free
}

}  // namespace
}  // namespace ladder::kv
