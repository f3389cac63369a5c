#include "ladder/engine/kv_block_codec.h"

#include <cstring>

namespace ladder::engine {

namespace {

constexpr char kMagic[8] = {'L', 'D', 'K', 'V', 'B', 'L', 'K', '1'};
// 2: the checksum is keyed by a secret and covers the header.
constexpr uint32_t kVersion = 2;

std::span<const uint8_t> as_bytes(const KvBlockHeader& header) {
    return {reinterpret_cast<const uint8_t*>(&header), sizeof(header)};
}

}  // namespace

KvBlockCodec::KvBlockCodec(uint64_t model_key, const model::KvCacheShape& shape,
                           const KeyedHash::Secret& secret)
    : checksum_(secret),
      model_key_(model_key),
      shape_(shape),
      kv_bytes_(shape.bytes_per_token() * shape.block_size) {}

int64_t KvBlockCodec::layer_block_bytes() const {
    return static_cast<int64_t>(shape_.n_kv_heads) * shape_.block_size * shape_.head_dim *
           static_cast<int64_t>(sizeof(uint16_t));
}

int64_t KvBlockCodec::encoded_bytes() const {
    return static_cast<int64_t>(sizeof(KvBlockHeader)) +
           static_cast<int64_t>(shape_.block_size) * static_cast<int64_t>(sizeof(int32_t)) +
           kv_bytes_;
}

kv::BlockHash KvBlockCodec::checksum(const KvBlockHeader& header,
                                     std::span<const uint8_t> payload) const {
    KvBlockHeader zeroed = header;
    zeroed.checksum_low = 0;
    zeroed.checksum_high = 0;
    return checksum_({as_bytes(zeroed), payload});
}

std::vector<uint8_t> KvBlockCodec::encode(const kv::BlockHash& hash,
                                          std::span<const int32_t> tokens,
                                          const model::KvCacheStorage& storage,
                                          kv::BlockId block) const {
    const size_t token_bytes = tokens.size_bytes();
    const auto chunk = static_cast<size_t>(layer_block_bytes());
    std::vector<uint8_t> bytes(sizeof(KvBlockHeader) + token_bytes +
                               static_cast<size_t>(kv_bytes_));
    uint8_t* payload = bytes.data() + sizeof(KvBlockHeader);
    std::memcpy(payload, tokens.data(), token_bytes);
    uint8_t* at = payload + token_bytes;
    for (int32_t layer = 0; layer < shape_.n_layers; ++layer) {
        std::memcpy(at, storage.keys(layer, block, 0), chunk);
        std::memcpy(at + chunk, storage.values(layer, block, 0), chunk);
        at += 2 * chunk;
    }
    KvBlockHeader header{};
    std::memcpy(header.magic, kMagic, sizeof(kMagic));
    header.version = kVersion;
    header.dtype = static_cast<uint32_t>(KvBlockDtype::F16);
    header.model_key = model_key_;
    header.n_layers = static_cast<uint32_t>(shape_.n_layers);
    header.n_kv_heads = static_cast<uint32_t>(shape_.n_kv_heads);
    header.head_dim = static_cast<uint32_t>(shape_.head_dim);
    header.block_size = static_cast<uint32_t>(shape_.block_size);
    header.hash_low = hash.low;
    header.hash_high = hash.high;
    header.payload_bytes = token_bytes + static_cast<uint64_t>(kv_bytes_);
    const kv::BlockHash sum = checksum(header, {payload, header.payload_bytes});
    header.checksum_low = sum.low;
    header.checksum_high = sum.high;
    std::memcpy(bytes.data(), &header, sizeof(header));
    return bytes;
}

bool KvBlockCodec::valid(std::span<const uint8_t> bytes, const kv::BlockHash& hash,
                         std::span<const int32_t> tokens) const {
    if (bytes.size() < sizeof(KvBlockHeader)) return false;
    KvBlockHeader header{};
    std::memcpy(&header, bytes.data(), sizeof(header));
    const uint64_t expected_payload = tokens.size_bytes() + static_cast<uint64_t>(kv_bytes_);
    const bool matches = std::memcmp(header.magic, kMagic, sizeof(kMagic)) == 0 &&
                         header.version == kVersion &&
                         header.dtype == static_cast<uint32_t>(KvBlockDtype::F16) &&
                         header.model_key == model_key_ &&
                         header.n_layers == static_cast<uint32_t>(shape_.n_layers) &&
                         header.n_kv_heads == static_cast<uint32_t>(shape_.n_kv_heads) &&
                         header.head_dim == static_cast<uint32_t>(shape_.head_dim) &&
                         header.block_size == static_cast<uint32_t>(shape_.block_size) &&
                         header.hash_low == hash.low && header.hash_high == hash.high &&
                         header.payload_bytes == expected_payload &&
                         bytes.size() == sizeof(header) + expected_payload;
    if (!matches) return false;
    const std::span<const uint8_t> payload = bytes.subspan(sizeof(header));
    return checksum(header, payload) == kv::BlockHash{header.checksum_low, header.checksum_high} &&
           std::memcmp(payload.data(), tokens.data(), tokens.size_bytes()) == 0;
}

bool KvBlockCodec::decode(std::span<const uint8_t> bytes, const kv::BlockHash& hash,
                          std::span<const int32_t> tokens, model::KvCacheStorage& storage,
                          kv::BlockId block) const {
    if (!valid(bytes, hash, tokens)) return false;
    const auto chunk = static_cast<size_t>(layer_block_bytes());
    const uint8_t* at = bytes.data() + sizeof(KvBlockHeader) + tokens.size_bytes();
    for (int32_t layer = 0; layer < shape_.n_layers; ++layer) {
        std::memcpy(storage.keys(layer, block, 0), at, chunk);
        std::memcpy(storage.values(layer, block, 0), at + chunk, chunk);
        at += 2 * chunk;
    }
    return true;
}

}  // namespace ladder::engine
