// The prefix cache's disk tier: blocks survive a restart and give the same
// outputs; files of another model, truncated, corrupted or forged files are
// removed, never loaded; the directory stays under its byte limit.
#include <gtest/gtest.h>

#include <cstring>

#include <filesystem>
#include <fstream>

#include "engine_test_support.h"
#include "ladder/engine/disk_kv_cache.h"
#include "ladder/engine/model_identity.h"

namespace ladder::engine::testing {
namespace disk_kv_cache_test {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("ladder-disk-kv-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        fs::remove_all(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }
    // The block files (the directory's secret and the like aside).
    std::vector<fs::path> files() const {
        std::vector<fs::path> found;
        for (const auto& entry : fs::directory_iterator(path_)) {
            if (entry.path().extension() == ".kvb") found.push_back(entry.path());
        }
        std::sort(found.begin(), found.end());
        return found;
    }

private:
    fs::path path_;
    static inline int counter_ = 0;
};

const model::KvCacheShape kShape{2, 1, 4, 4, 8};  // layers, kv heads, head_dim, block size, blocks

// Bytes of one layer's K (V) of one block.
int64_t key_block_bytes(const model::KvCacheShape& shape) {
    return int64_t{shape.n_kv_heads} * shape.block_size * shape.key_row_bytes();
}
int64_t value_block_bytes(const model::KvCacheShape& shape) {
    return int64_t{shape.n_kv_heads} * shape.block_size * shape.value_row_bytes();
}

// Fills block `block` of storage with bytes derived from seed.
void fill(model::KvCacheStorage& storage, kv::BlockId block, uint16_t seed) {
    const model::KvCacheShape& shape = storage.shape();
    for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
        for (int64_t i = 0; i < key_block_bytes(shape); ++i) {
            storage.keys(layer, block, 0)[i] = static_cast<uint8_t>(seed + layer * 100 + i);
        }
        for (int64_t i = 0; i < value_block_bytes(shape); ++i) {
            storage.values(layer, block, 0)[i] = static_cast<uint8_t>(seed + layer * 100 + i + 50);
        }
    }
}

bool same_block(const model::KvCacheStorage& a, kv::BlockId block_a, const model::KvCacheStorage& b,
                kv::BlockId block_b) {
    const model::KvCacheShape& shape = a.shape();
    const auto n_keys = static_cast<size_t>(key_block_bytes(shape));
    const auto n_values = static_cast<size_t>(value_block_bytes(shape));
    for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
        if (std::memcmp(a.keys(layer, block_a, 0), b.keys(layer, block_b, 0), n_keys) != 0 ||
            std::memcmp(a.values(layer, block_a, 0), b.values(layer, block_b, 0), n_values) != 0) {
            return false;
        }
    }
    return true;
}

const std::vector<int32_t> kTokens{11, 12, 13, 14};

TEST(DiskKvCache, BlockRoundTripsAcrossInstances) {
    TempDir dir;
    model::KvCacheStorage written(kShape);
    fill(written, 3, 7);
    const kv::BlockHash hash = kv::hash_block(kv::root_hash(1), kTokens);
    {
        DiskKvCache cache(dir.path(), 1 << 20, 1, kShape);
        cache.store(hash, kTokens, written, 3);
    }  // the destructor finishes the write
    DiskKvCache reopened(dir.path(), 1 << 20, 1, kShape);
    ASSERT_TRUE(reopened.contains(hash));
    model::KvCacheStorage read(kShape);
    ASSERT_TRUE(reopened.load(hash, kTokens, read, 5));
    EXPECT_TRUE(same_block(written, 3, read, 5));
    EXPECT_EQ(reopened.stats().n_loaded, 1);
}

class DiskKvCacheRejects : public ::testing::Test {
protected:
    // Writes one block, then lets the test spoil its file.
    void SetUp() override {
        model::KvCacheStorage storage(kShape);
        fill(storage, 0, 1);
        DiskKvCache cache(dir_.path(), 1 << 20, 1, kShape);
        cache.store(hash_, kTokens, storage, 0);
    }
    fs::path file() const { return dir_.files().at(0); }
    void expect_rejected(uint64_t model_key = 1, const std::vector<int32_t>& tokens = kTokens,
                         const model::KvCacheShape& shape = kShape) {
        DiskKvCache cache(dir_.path(), 1 << 20, model_key, shape);
        model::KvCacheStorage storage(shape);
        EXPECT_FALSE(cache.load(hash_, tokens, storage, 0));
        EXPECT_TRUE(dir_.files().empty()) << "a bad file must be removed";
        EXPECT_EQ(cache.stats().n_rejected, 1);
    }
    TempDir dir_;
    kv::BlockHash hash_ = kv::hash_block(kv::root_hash(1), kTokens);
};

TEST_F(DiskKvCacheRejects, AnotherModel) { expect_rejected(2); }

TEST_F(DiskKvCacheRejects, OtherTokens) { expect_rejected(1, {11, 12, 13, 99}); }

// The same bytes per block, so the file size cannot tell: the header must.
TEST_F(DiskKvCacheRejects, SameSizeShapeWithLayersForHeads) {
    const model::KvCacheShape other{1, 2, 4, 4, 8};
    ASSERT_EQ(other.bytes_per_token(), kShape.bytes_per_token());
    expect_rejected(1, kTokens, other);
}

TEST_F(DiskKvCacheRejects, SameSizeShapeWithHeadsForHeadDim) {
    const model::KvCacheShape other{2, 2, 2, 4, 8};
    ASSERT_EQ(other.bytes_per_token(), kShape.bytes_per_token());
    expect_rejected(1, kTokens, other);
}

TEST_F(DiskKvCacheRejects, TruncatedFile) {
    fs::resize_file(file(), fs::file_size(file()) - 3);
    expect_rejected();
}

TEST_F(DiskKvCacheRejects, FlippedByte) {
    std::fstream f(file(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
    f.close();
    expect_rejected();
}

TEST_F(DiskKvCacheRejects, GarbageHeader) {
    std::ofstream(file(), std::ios::binary | std::ios::trunc) << "not a block";
    expect_rejected();
}

TEST(DiskKvCache, SizeLimitDropsTheOldestFiles) {
    TempDir dir;
    model::KvCacheStorage storage(kShape);
    const int64_t file_bytes = 72 + 4 * 4 + kShape.bytes_per_token() * kShape.block_size;
    std::vector<kv::BlockHash> hashes;
    {
        DiskKvCache cache(dir.path(), 2 * file_bytes + file_bytes / 2, 1, kShape);
        for (int32_t i = 0; i < 4; ++i) {
            const std::vector<int32_t> tokens{i, i, i, i};
            hashes.push_back(kv::hash_block(kv::root_hash(1), tokens));
            fill(storage, 0, static_cast<uint16_t>(i));
            cache.store(hashes.back(), tokens, storage, 0);
            while (cache.n_pending_writes() > 0) std::this_thread::yield();
        }
        EXPECT_EQ(cache.stats().n_files, 2);
        EXPECT_FALSE(cache.contains(hashes[0]));
        EXPECT_FALSE(cache.contains(hashes[1]));
        EXPECT_TRUE(cache.contains(hashes[3]));
    }
    EXPECT_EQ(dir.files().size(), 2u);
}

// On the real model: a restart with the same directory serves the prompt's
// blocks from disk, with the same output as computing them.
TEST_F(EngineTest, DiskTierServesAPrefixAfterARestart) {
    TempDir dir;
    RequestParams params;
    params.prompt = encode(
        "A support bot sends the same long instruction block with every "
        "question, so its KV should come from the cache, even after the "
        "server restarts and memory is empty.");
    params.sampling.temperature = 0.0f;
    params.max_tokens = 8;
    const Collected cold = run_alone(params);
    const int32_t shareable = (static_cast<int32_t>(params.prompt.size()) - 1) / 16 * 16;
    ASSERT_GE(shareable, 32);

    EngineConfig config;
    config.kv_disk_cache_dir = dir.path().string();
    config.model_key = model_identity(*bundle_->file);
    auto run_with_disk = [&] {
        auto core = make_core(config);
        std::map<RequestId, Collected> results;
        core->add_request(RequestId{1}, params, collect_into(results, RequestId{1}));
        run_to_end(*core);
        return std::make_pair(results[RequestId{1}], core->stats());
    };
    const auto [first, first_stats] = run_with_disk();
    EXPECT_EQ(first.last.n_cached_prompt_tokens, 0);
    EXPECT_EQ(first.tokens, cold.tokens);

    const auto [second, second_stats] = run_with_disk();  // a new engine: memory is empty
    EXPECT_EQ(second.last.n_cached_prompt_tokens, shareable);
    EXPECT_EQ(second_stats.n_disk_blocks_loaded, shareable / 16);
    EXPECT_EQ(second.tokens, cold.tokens);

    // Truncate every file: nothing is loaded, the bad files are removed (and
    // written again whole), the output is unchanged.
    std::vector<fs::path> files = dir.files();
    ASSERT_FALSE(files.empty());
    for (const fs::path& file : files) fs::resize_file(file, 100);
    const auto [third, third_stats] = run_with_disk();
    EXPECT_EQ(third.last.n_cached_prompt_tokens, 0);
    EXPECT_EQ(third_stats.n_disk_blocks_loaded, 0);
    EXPECT_EQ(third.tokens, cold.tokens);
    for (const fs::path& file : dir.files()) EXPECT_GT(fs::file_size(file), 100u) << file;
}

}  // namespace disk_kv_cache_test
}  // namespace ladder::engine::testing
