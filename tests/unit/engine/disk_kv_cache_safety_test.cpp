// The disk tier against a hostile or unlucky directory: it is created 0700
// and refused if others may write to it; files are 0600; a symlink is not
// followed, a FIFO not blocked on, another process's temporary file kept, a
// forged block (written without this directory's secret) rejected, and a
// transient error (no descriptor left) never deletes a file. The model's
// identity covers all its bytes and is remembered by file stamp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "engine_test_support.h"
#include "ladder/engine/cache_directory.h"
#include "ladder/engine/disk_kv_cache.h"
#include "ladder/engine/model_identity.h"
#include "ladder/gguf/gguf_writer.h"
#include "ladder/util/error.h"

namespace ladder::engine::testing {
namespace {

namespace fs = std::filesystem;

const model::KvCacheShape kShape{2, 1, 4, 4, 8};
const std::vector<int32_t> kTokens{11, 12, 13, 14};
const kv::BlockHash kHash = kv::hash_block(kv::root_hash(1), kTokens);

fs::path fresh_path(const std::string& what) {
    static int counter = 0;
    const fs::path path =
        fs::temp_directory_path() / ("ladder-disk-safety-" + std::to_string(::getpid()) + "-" +
                                     what + "-" + std::to_string(counter++));
    fs::remove_all(path);
    return path;
}

mode_t mode_of(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
    return info.st_mode & 0777;
}

class DiskSafety : public ::testing::Test {
protected:
    void TearDown() override {
        for (const fs::path& path : cleanup_) fs::remove_all(path);
    }
    // A directory holding one block written by a cache of its own.
    fs::path directory_with_a_block() {
        const fs::path dir = fresh_path("dir");
        cleanup_.push_back(dir);
        model::KvCacheStorage storage(kShape);
        DiskKvCache cache(dir, 1 << 20, 1, kShape);
        cache.store(kHash, kTokens, storage, 0);
        return dir;  // the destructor finished the write
    }
    static fs::path block_file(const fs::path& dir) {
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.path().extension() == ".kvb") return entry.path();
        }
        ADD_FAILURE() << "no block file in " << dir;
        return {};
    }
    static bool loads(DiskKvCache& cache) {
        model::KvCacheStorage storage(kShape);
        return cache.load(kHash, kTokens, storage, 0);
    }
    std::vector<fs::path> cleanup_;
};

TEST_F(DiskSafety, TheDirectoryIsPrivateAndSoAreItsFiles) {
    const fs::path dir = directory_with_a_block();
    EXPECT_EQ(mode_of(dir), 0700u);
    for (const auto& entry : fs::directory_iterator(dir)) {
        EXPECT_EQ(mode_of(entry.path()), 0600u) << entry.path();
    }
    EXPECT_TRUE(fs::exists(dir / "checksum.key"));
}

TEST_F(DiskSafety, RefusesADirectoryOthersCanWrite) {
    const fs::path dir = fresh_path("open");
    cleanup_.push_back(dir);
    fs::create_directory(dir);
    for (const mode_t mode : {0777, 0770, 0702}) {
        ::chmod(dir.c_str(), mode);
        EXPECT_THROW(DiskKvCache(dir, 1 << 20, 1, kShape), util::InputError) << std::oct << mode;
    }
    ::chmod(dir.c_str(), 0755);
    EXPECT_NO_THROW(DiskKvCache(dir, 1 << 20, 1, kShape));
}

TEST_F(DiskSafety, RefusesASecretOthersCanRead) {
    const fs::path dir = directory_with_a_block();
    ::chmod((dir / "checksum.key").c_str(), 0644);
    EXPECT_THROW(DiskKvCache(dir, 1 << 20, 1, kShape), util::InputError);
}

TEST_F(DiskSafety, ASymlinkIsNotFollowed) {
    const fs::path dir = directory_with_a_block();
    const fs::path file = block_file(dir);
    DiskKvCache cache(dir, 1 << 20, 1, kShape);
    ASSERT_TRUE(cache.contains(kHash));
    // The block is replaced by a link to a copy of itself elsewhere: a
    // valid block, but reached through a link, so never read.
    const fs::path target = fresh_path("target");
    cleanup_.push_back(target);
    fs::copy_file(file, target);
    const auto target_bytes = fs::file_size(target);
    fs::remove(file);
    fs::create_symlink(target, file);
    EXPECT_FALSE(loads(cache));
    EXPECT_FALSE(cache.contains(kHash));
    EXPECT_TRUE(fs::is_symlink(file)) << "the link is not ours to remove";
    ASSERT_TRUE(fs::exists(target)) << "the target is untouched";
    EXPECT_EQ(fs::file_size(target), target_bytes);
    EXPECT_EQ(cache.stats().n_rejected, 0);
    // Nor is a link indexed at start.
    DiskKvCache reopened(dir, 1 << 20, 1, kShape);
    EXPECT_FALSE(reopened.contains(kHash));
    EXPECT_TRUE(fs::is_symlink(file));
}

TEST_F(DiskSafety, AFifoIsNotBlockedOn) {
    const fs::path dir = directory_with_a_block();
    const fs::path file = block_file(dir);
    DiskKvCache cache(dir, 1 << 20, 1, kShape);
    fs::remove(file);
    ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
    auto loading = std::async(std::launch::async, [&] { return loads(cache); });
    if (loading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        // Let the blocked open go before failing, or the test would hang.
        const int writer = ::open(file.c_str(), O_WRONLY | O_NONBLOCK);
        if (writer >= 0) ::close(writer);
        FAIL() << "load blocked on a FIFO";
    }
    EXPECT_FALSE(loading.get());
    EXPECT_TRUE(fs::is_fifo(file)) << "the FIFO is not ours to remove";
}

TEST_F(DiskSafety, OtherProcessesTemporaryFilesAreKept) {
    const fs::path dir = directory_with_a_block();
    const std::vector<fs::path> foreign{dir / "0123456789abcdef0123456789abcdef.kvb.tmp",
                                        dir / ".4242.0.tmp", dir / "notes.txt"};
    for (const fs::path& path : foreign) std::ofstream(path) << "someone else's";
    {
        DiskKvCache cache(dir, 1 << 20, 1, kShape);
        model::KvCacheStorage storage(kShape);
        cache.store(kv::hash_block(kv::root_hash(1), std::vector<int32_t>{1, 2, 3, 4}),
                    std::vector<int32_t>{1, 2, 3, 4}, storage, 0);
    }
    for (const fs::path& path : foreign) EXPECT_TRUE(fs::exists(path)) << path;
    // And none of this process's own is left behind.
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        EXPECT_FALSE(name.starts_with("." + std::to_string(::getpid()) + ".")) << name;
    }
}

TEST_F(DiskSafety, ABlockWrittenWithoutTheSecretIsRejected) {
    // A well-formed block of the right model, shape and tokens, from another
    // cache directory (another secret): planted here, it must not load.
    const fs::path elsewhere = directory_with_a_block();
    const fs::path dir = fresh_path("victim");
    cleanup_.push_back(dir);
    { DiskKvCache make_the_directory(dir, 1 << 20, 1, kShape); }
    const fs::path planted = dir / block_file(elsewhere).filename();
    fs::copy_file(block_file(elsewhere), planted);
    ::chmod(planted.c_str(), 0600);
    DiskKvCache cache(dir, 1 << 20, 1, kShape);
    ASSERT_TRUE(cache.contains(kHash));
    EXPECT_FALSE(loads(cache));
    EXPECT_EQ(cache.stats().n_rejected, 1);
    EXPECT_FALSE(fs::exists(planted)) << "a forged block is removed";
    // The same file in its own directory loads.
    DiskKvCache own(elsewhere, 1 << 20, 1, kShape);
    EXPECT_TRUE(loads(own));
}

TEST_F(DiskSafety, ATransientErrorNeverDeletesAFile) {
    const fs::path dir = directory_with_a_block();
    DiskKvCache cache(dir, 1 << 20, 1, kShape);
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
    // The lowest free descriptor becomes the limit: the next open gets EMFILE.
    const int lowest_free = ::dup(0);
    ASSERT_GE(lowest_free, 0);
    ::close(lowest_free);
    rlimit tight = saved;
    tight.rlim_cur = static_cast<rlim_t>(lowest_free);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
    const bool loaded_without_descriptors = loads(cache);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
    EXPECT_FALSE(loaded_without_descriptors);
    EXPECT_EQ(cache.stats().n_transient, 1);
    EXPECT_EQ(cache.stats().n_rejected, 0);
    EXPECT_TRUE(cache.contains(kHash));
    EXPECT_TRUE(loads(cache)) << "the block loads once descriptors are back";
}

// A small GGUF with one tensor of `n_bytes` bytes, byte `flipped` changed.
fs::path write_model(const fs::path& path, size_t n_bytes, size_t flipped) {
    std::vector<uint8_t> data(n_bytes, 0x11);
    data[flipped] ^= 0xff;
    gguf::GgufWriter writer;
    writer.set("general.architecture", gguf::Value::string("llama"));
    writer.add_tensor("t", tensor::DType::F32, {static_cast<int64_t>(n_bytes / 4)},
                      std::move(data));
    writer.write_file(path.string());
    return path;
}

TEST_F(DiskSafety, TheModelIdentityCoversEveryByteAndIsRemembered) {
    const fs::path dir_path = fresh_path("identity");
    cleanup_.push_back(dir_path);
    const fs::path model_a = fresh_path("model-a.gguf");
    const fs::path model_b = fresh_path("model-b.gguf");
    cleanup_.insert(cleanup_.end(), {model_a, model_b});
    // Two files that differ in one byte a third of the way into the data,
    // where no sample of the start, middle or end would look.
    constexpr size_t kBytes = 3 << 20;
    write_model(model_a, kBytes, kBytes / 3);
    write_model(model_b, kBytes, kBytes / 3 + 1);
    const auto a = gguf::GgufFile::open(model_a.string());
    const auto b = gguf::GgufFile::open(model_b.string());
    EXPECT_NE(model_identity(*a), model_identity(*b));

    const CacheDirectory dir(dir_path, "--kv-disk-cache");
    const uint64_t identity = cached_model_identity(*a, dir);
    EXPECT_EQ(identity, model_identity(*a));
    ASSERT_TRUE(fs::exists(dir_path / "model-identities"));
    EXPECT_EQ(mode_of(dir_path / "model-identities"), 0600u);
    // The record is what is read back: spoil it and the spoiled value comes back,
    // which shows the file was not hashed again.
    std::string record;
    std::getline(std::ifstream(dir_path / "model-identities"), record);
    const std::string spoiled = record.substr(0, record.rfind(' ') + 1) + "00000000000000aa\n";
    std::ofstream(dir_path / "model-identities") << spoiled;
    EXPECT_EQ(cached_model_identity(*a, dir), 0xaau);
    // Another file (another inode) is hashed and recorded beside it.
    EXPECT_EQ(cached_model_identity(*b, dir), model_identity(*b));
    EXPECT_EQ(cached_model_identity(*a, dir), 0xaau);
}

// On the real model: the disk tier keeps tenants apart too, across a restart.
TEST_F(EngineTest, SaltedBlocksOnDiskAreFoundOnlyWithTheirSalt) {
    const fs::path dir = fresh_path("salted");
    RequestParams params;
    params.prompt = encode(
        "Tenant A's long system prompt, several blocks long, kept on disk for tenant A alone "
        "and for nobody else who happens to send the same words.");
    params.sampling.temperature = 0.0f;
    params.max_tokens = 2;
    params.cache_salt = "A";
    const int32_t shareable = (static_cast<int32_t>(params.prompt.size()) - 1) / 16 * 16;
    EngineConfig config;
    config.kv_disk_cache_dir = dir.string();
    config.model_key = model_identity(*bundle_->file);
    auto cached_after_restart = [&](const std::string& salt) {
        auto core = make_core(config);  // memory empty: only the disk can hit
        std::map<RequestId, Collected> results;
        RequestParams p = params;
        p.cache_salt = salt;
        core->add_request(RequestId{1}, p, collect_into(results, RequestId{1}));
        run_to_end(*core);
        return results[RequestId{1}].last.n_cached_prompt_tokens;
    };
    EXPECT_EQ(cached_after_restart("A"), 0);
    EXPECT_EQ(cached_after_restart("B"), 0) << "tenant B must not read tenant A's blocks";
    EXPECT_EQ(cached_after_restart(""), 0);
    EXPECT_EQ(cached_after_restart("A"), shareable);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace ladder::engine::testing
