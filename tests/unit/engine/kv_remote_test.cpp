// The remote KV tier's parts that need no Redis: the block codec (a block of
// another model, shape or type, for another hash or tokens, or with a bad
// checksum is refused), the circuit breaker, the --kv-remote URL, and a tier
// whose Redis is not there (misses at once, counts errors, never blocks).
// The round trip through a real redis-server is tests/e2e/test_kv_remote.py.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <numeric>

#include "ladder/engine/circuit_breaker.h"
#include "ladder/engine/kv_block_codec.h"
#include "ladder/engine/redis_address.h"
#include "ladder/engine/remote_kv_cache.h"
#include "ladder/util/error.h"
#include "ladder/util/timer.h"

namespace ladder::engine::testing {
namespace kv_remote_test {

const model::KvCacheShape kShape{2, 1, 4, 4, 2};  // layers, kv heads, head_dim, block size, blocks
const kv::BlockHash kHash{0x1234, 0x5678};
const std::vector<int32_t> kTokens{5, 6, 7, 8};

// Bytes of one layer's K (V) of one block.
size_t key_block_bytes(const model::KvCacheShape& shape) {
    return static_cast<size_t>(int64_t{shape.n_kv_heads} * shape.block_size *
                               shape.key_row_bytes());
}
size_t value_block_bytes(const model::KvCacheShape& shape) {
    return static_cast<size_t>(int64_t{shape.n_kv_heads} * shape.block_size *
                               shape.value_row_bytes());
}

void fill(model::KvCacheStorage& storage, kv::BlockId block, uint16_t seed) {
    const model::KvCacheShape& shape = storage.shape();
    for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
        for (size_t i = 0; i < key_block_bytes(shape); ++i) {
            storage.keys(layer, block, 0)[i] = static_cast<uint8_t>(seed + layer * 100 + i);
        }
        for (size_t i = 0; i < value_block_bytes(shape); ++i) {
            storage.values(layer, block, 0)[i] = static_cast<uint8_t>(seed + layer * 100 + i + 50);
        }
    }
}

bool same_block(const model::KvCacheStorage& storage, kv::BlockId a, kv::BlockId b) {
    const model::KvCacheShape& shape = storage.shape();
    for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
        if (std::memcmp(storage.keys(layer, a, 0), storage.keys(layer, b, 0),
                        key_block_bytes(shape)) != 0 ||
            std::memcmp(storage.values(layer, a, 0), storage.values(layer, b, 0),
                        value_block_bytes(shape)) != 0)
            return false;
    }
    return true;
}

KeyedHash::Secret secret_of(uint8_t byte) {
    KeyedHash::Secret secret{};
    secret.fill(byte);
    return secret;
}

class KvBlockCodecTest : public ::testing::Test {
protected:
    KvBlockCodecTest() : storage_(kShape), codec_(7, kShape, secret_of(1)) { fill(storage_, 0, 3); }

    // Block 1 zeroed, then the bytes decoded into it.
    bool decodes(const KvBlockCodec& codec, std::span<const uint8_t> bytes,
                 const kv::BlockHash& hash = kHash, std::span<const int32_t> tokens = kTokens) {
        fill(storage_, 1, 0);
        return codec.decode(bytes, hash, tokens, storage_, 1);
    }
    // The header of bytes, changed by edit and checksummed again with the
    // right secret: a block another writer of the same Redis really made.
    template <typename Edit>
    std::vector<uint8_t> reheadered(std::vector<uint8_t> bytes, Edit edit) const {
        KvBlockHeader header{};
        std::memcpy(&header, bytes.data(), sizeof(header));
        edit(header);
        const kv::BlockHash sum = codec_.checksum(header, std::span(bytes).subspan(sizeof(header)));
        header.checksum_low = sum.low;
        header.checksum_high = sum.high;
        std::memcpy(bytes.data(), &header, sizeof(header));
        return bytes;
    }

    model::KvCacheStorage storage_;
    KvBlockCodec codec_;
};

TEST_F(KvBlockCodecTest, RoundTripsTheBlock) {
    const std::vector<uint8_t> bytes = codec_.encode(kHash, kTokens, storage_, 0);
    EXPECT_EQ(static_cast<int64_t>(bytes.size()), codec_.encoded_bytes());
    ASSERT_TRUE(decodes(codec_, bytes));
    EXPECT_TRUE(same_block(storage_, 0, 1));
}

TEST_F(KvBlockCodecTest, RefusesAnotherModelShapeOrSecret) {
    const std::vector<uint8_t> bytes = codec_.encode(kHash, kTokens, storage_, 0);
    EXPECT_FALSE(decodes(KvBlockCodec(8, kShape, secret_of(1)), bytes)) << "another model";
    model::KvCacheShape heads = kShape;
    heads.n_kv_heads = 2;
    heads.head_dim = 2;  // the same bytes per token, laid out otherwise
    EXPECT_FALSE(decodes(KvBlockCodec(7, heads, secret_of(1)), bytes)) << "another shape";
    EXPECT_FALSE(decodes(KvBlockCodec(7, kShape, secret_of(2)), bytes)) << "another secret";
    EXPECT_FALSE(same_block(storage_, 0, 1)) << "a refused block leaves storage alone";
}

TEST_F(KvBlockCodecTest, RefusesAnotherTypeEvenWithAValidChecksum) {
    const std::vector<uint8_t> bytes = codec_.encode(kHash, kTokens, storage_, 0);
    EXPECT_TRUE(decodes(codec_, reheadered(bytes, [](KvBlockHeader&) {})));
    EXPECT_FALSE(decodes(codec_, reheadered(bytes, [](KvBlockHeader& h) { h.key_dtype = 8; })));
    EXPECT_FALSE(decodes(codec_, reheadered(bytes, [](KvBlockHeader& h) { h.value_dtype = 8; })));
    EXPECT_FALSE(decodes(codec_, reheadered(bytes, [](KvBlockHeader& h) { h.model_key = 9; })));
    EXPECT_FALSE(decodes(codec_, reheadered(bytes, [](KvBlockHeader& h) { h.n_layers = 1; })));
}

// A quantized cache (--kv-cache-dtype) round-trips its own blocks, and a block
// of any other K or V type is a miss, never a load: even K q8_0 + V f16
// against K f16 + V q8_0, whose blocks have the same size.
TEST(KvBlockCodecTypes, RoundTripsAQuantizedBlockAndRefusesAnyOtherTypes) {
    using tensor::DType;
    // Blocks of 16 tokens: a BF16 K cache is stored in tiles of 16 positions.
    const auto shape_of = [](DType key, DType value) {
        return model::KvCacheShape{2, 2, 32, 16, 2, {key, value}};
    };
    std::vector<int32_t> tokens(16);
    std::iota(tokens.begin(), tokens.end(), 5);
    const std::vector<model::KvCacheTypes> types = {
        {DType::F16, DType::F16},   {DType::Q8_0, DType::Q8_0}, {DType::Q4_0, DType::Q4_0},
        {DType::BF16, DType::BF16}, {DType::Q8_0, DType::F16},  {DType::F16, DType::Q8_0}};
    ASSERT_EQ(shape_of(DType::Q8_0, DType::F16).bytes_per_token(),
              shape_of(DType::F16, DType::Q8_0).bytes_per_token());
    for (const model::KvCacheTypes& written : types) {
        const model::KvCacheShape shape = shape_of(written.key, written.value);
        model::KvCacheStorage storage(shape);
        fill(storage, 0, 9);
        const KvBlockCodec codec(7, shape, secret_of(1));
        const std::vector<uint8_t> bytes = codec.encode(kHash, tokens, storage, 0);
        EXPECT_EQ(static_cast<int64_t>(bytes.size()), codec.encoded_bytes());
        fill(storage, 1, 0);
        ASSERT_TRUE(codec.decode(bytes, kHash, tokens, storage, 1));
        EXPECT_TRUE(same_block(storage, 0, 1));
        for (const model::KvCacheTypes& reader : types) {
            if (reader == written) continue;
            const model::KvCacheShape other = shape_of(reader.key, reader.value);
            model::KvCacheStorage target(other);
            fill(target, 1, 0);
            model::KvCacheStorage untouched(other);
            fill(untouched, 1, 0);
            EXPECT_FALSE(
                KvBlockCodec(7, other, secret_of(1)).decode(bytes, kHash, tokens, target, 1))
                << model::kv_cache_types_name(written) << " read as "
                << model::kv_cache_types_name(reader);
            EXPECT_EQ(
                std::memcmp(target.keys(0, 1, 0), untouched.keys(0, 1, 0), key_block_bytes(other)),
                0)
                << "a refused block leaves storage alone";
        }
    }
}

TEST_F(KvBlockCodecTest, RefusesAnotherBlockOrTokens) {
    const std::vector<uint8_t> bytes = codec_.encode(kHash, kTokens, storage_, 0);
    EXPECT_FALSE(decodes(codec_, bytes, kv::BlockHash{0x1234, 0x5679}));
    const std::vector<int32_t> other{5, 6, 7, 9};
    EXPECT_FALSE(decodes(codec_, bytes, kHash, other));
}

TEST_F(KvBlockCodecTest, RefusesAnyChangedOrCutByte) {
    const std::vector<uint8_t> bytes = codec_.encode(kHash, kTokens, storage_, 0);
    for (size_t at = 0; at < bytes.size(); at += 7) {
        std::vector<uint8_t> changed = bytes;
        changed[at] ^= 0x10;
        EXPECT_FALSE(decodes(codec_, changed)) << "byte " << at;
    }
    EXPECT_FALSE(decodes(codec_, std::span(bytes).first(bytes.size() - 1)));
    EXPECT_FALSE(decodes(codec_, std::span(bytes).first(10)));
    EXPECT_FALSE(decodes(codec_, {}));
    std::vector<uint8_t> longer = bytes;
    longer.push_back(0);
    EXPECT_FALSE(decodes(codec_, longer));
}

TEST(CircuitBreakerTest, OpensAfterFailuresInARowThenTriesOnce) {
    CircuitBreaker breaker(3, 5.0);
    EXPECT_TRUE(breaker.allow(0.0));
    breaker.record_failure(0.0);
    breaker.record_failure(0.1);
    breaker.record_success();  // the run is broken
    breaker.record_failure(0.2);
    breaker.record_failure(0.3);
    EXPECT_TRUE(breaker.allow(0.3));
    breaker.record_failure(0.4);
    EXPECT_TRUE(breaker.is_open(0.5));
    EXPECT_FALSE(breaker.allow(5.3));
    EXPECT_EQ(breaker.n_opened(), 1);
    // Half open: one trial, nobody else until it reports.
    EXPECT_TRUE(breaker.allow(5.5));
    EXPECT_FALSE(breaker.allow(5.6));
    breaker.record_failure(5.7);  // the trial failed: open again, at once
    EXPECT_FALSE(breaker.allow(10.0));
    EXPECT_EQ(breaker.n_opened(), 2);
    EXPECT_TRUE(breaker.allow(10.8));
    breaker.record_success();  // closed
    EXPECT_FALSE(breaker.is_open(10.9));
    EXPECT_TRUE(breaker.allow(10.9));
    EXPECT_TRUE(breaker.allow(10.9));
}

TEST(RedisAddressTest, ParsesTheUrlForms) {
    const RedisAddress full = parse_redis_url("redis://10.0.0.5:6380/2");
    EXPECT_EQ(full.host, "10.0.0.5");
    EXPECT_EQ(full.port, 6380);
    EXPECT_EQ(full.db, 2);
    const RedisAddress bare = parse_redis_url("redis://cache.internal");
    EXPECT_EQ(bare.host, "cache.internal");
    EXPECT_EQ(bare.port, 6379);
    EXPECT_EQ(bare.db, 0);
    EXPECT_EQ(parse_redis_url("redis://127.0.0.1:7000").url(), "redis://127.0.0.1:7000/0");
    for (const char* bad :
         {"http://h:1", "redis://", "redis://:6379", "redis://h:0", "redis://h:70000",
          "redis://h:x", "redis://h:1/db", "redis://user:pw@h:1"}) {
        EXPECT_THROW(parse_redis_url(bad), util::InputError) << bad;
    }
}

// A loopback port nothing listens on (bound, then closed).
int closed_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

TEST(RemoteKvCacheTest, ARedisThatIsNotThereIsAMissAndAnErrorNeverAWait) {
    RemoteKvCacheOptions options;
    options.open_seconds = 60.0;
    RemoteKvCache remote(RedisAddress{"127.0.0.1", closed_port(), 0}, 7, kShape, options);
    EXPECT_FALSE(remote.startup_secret());
    model::KvCacheStorage storage(kShape);
    fill(storage, 0, 3);
    const double start = util::now_seconds();
    for (int i = 0; i < 20; ++i) {
        remote.store(kHash, kTokens, storage, 0);
        const kv::BlockHash hashes[] = {kHash};
        remote.begin_lookup(hashes);
        EXPECT_FALSE(remote.load(kHash, kTokens, storage, 1));
        remote.end_lookup();
    }
    EXPECT_LT(util::now_seconds() - start, 1.0);
    const RemoteKvCacheStats stats = remote.stats();
    EXPECT_GE(stats.n_errors, 3);
    EXPECT_TRUE(stats.breaker_open);
    EXPECT_EQ(stats.n_dropped_writes, 20) << "no secret yet: nothing can be written";
    EXPECT_EQ(stats.n_hit_blocks, 0);
}

TEST(RemoteKvCacheTest, KeysNameModelShapeTypeAndHash) {
    RemoteKvCache remote(RedisAddress{"127.0.0.1", closed_port(), 0}, 0xabc, kShape);
    EXPECT_EQ(remote.block_key(kv::BlockHash{0x2, 0x1}),
              "ladder:kv:v1:0000000000000abc:2x1x4x4:f16:"
              "00000000000000010000000000000002");
    const model::KvCacheShape quantized{2, 1, 32, 4, 2, {tensor::DType::Q8_0, tensor::DType::F16}};
    RemoteKvCache q8(RedisAddress{"127.0.0.1", closed_port(), 0}, 0xabc, quantized);
    EXPECT_EQ(q8.block_key(kv::BlockHash{0x2, 0x1}),
              "ladder:kv:v1:0000000000000abc:2x1x32x4:q8_0-f16:"
              "00000000000000010000000000000002");
}

}  // namespace kv_remote_test
}  // namespace ladder::engine::testing
