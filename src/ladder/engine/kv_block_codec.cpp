#include "ladder/engine/kv_block_codec.h"

#include <cstring>

namespace ladder::engine {

namespace {

constexpr char kMagic[8] = {'L', 'D', 'K', 'V', 'B', 'L', 'K', '1'};
// 2: the checksum is keyed by a secret and covers the header. 3: the header
// names the K and V types (a block of version 2 was F16 in one field). 4: a
// quantized K or V is held rotated (model::key_rotation, value_rotation); a
// version 3 block of such a type was not. 5: a BF16 K or V is held in the
// attention kernel's tiles (model::min_block_size); version 4 held rows.
constexpr uint32_t kVersion = 5;

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

int64_t KvBlockCodec::layer_block_key_bytes() const {
    return static_cast<int64_t>(shape_.n_kv_heads) * shape_.block_size * shape_.key_row_bytes();
}

int64_t KvBlockCodec::layer_block_value_bytes() const {
    return static_cast<int64_t>(shape_.n_kv_heads) * shape_.block_size * shape_.value_row_bytes();
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
    const auto key_chunk = static_cast<size_t>(layer_block_key_bytes());
    const auto value_chunk = static_cast<size_t>(layer_block_value_bytes());
    std::vector<uint8_t> bytes(sizeof(KvBlockHeader) + token_bytes +
                               static_cast<size_t>(kv_bytes_));
    uint8_t* payload = bytes.data() + sizeof(KvBlockHeader);
    std::memcpy(payload, tokens.data(), token_bytes);
    uint8_t* at = payload + token_bytes;
    for (int32_t layer = 0; layer < shape_.n_layers; ++layer) {
        std::memcpy(at, storage.keys(layer, block, 0), key_chunk);
        std::memcpy(at + key_chunk, storage.values(layer, block, 0), value_chunk);
        at += key_chunk + value_chunk;
    }
    KvBlockHeader header{};
    std::memcpy(header.magic, kMagic, sizeof(kMagic));
    header.version = kVersion;
    header.key_dtype = static_cast<uint16_t>(shape_.types.key);
    header.value_dtype = static_cast<uint16_t>(shape_.types.value);
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
                         header.key_dtype == static_cast<uint16_t>(shape_.types.key) &&
                         header.value_dtype == static_cast<uint16_t>(shape_.types.value) &&
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
    const auto key_chunk = static_cast<size_t>(layer_block_key_bytes());
    const auto value_chunk = static_cast<size_t>(layer_block_value_bytes());
    const uint8_t* at = bytes.data() + sizeof(KvBlockHeader) + tokens.size_bytes();
    for (int32_t layer = 0; layer < shape_.n_layers; ++layer) {
        std::memcpy(storage.keys(layer, block, 0), at, key_chunk);
        std::memcpy(storage.values(layer, block, 0), at + key_chunk, value_chunk);
        at += key_chunk + value_chunk;
    }
    return true;
}

}  // namespace ladder::engine
