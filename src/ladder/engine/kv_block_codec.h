// One KV block as bytes, for the tiers that keep blocks outside memory (the
// disk tier's files, the remote tier's Redis values): a header with the
// model's identity, the KV shape and type, the block's chained hash and a
// checksum keyed by a secret, then the block's token ids and its K/V, layer
// by layer. Bytes that were written for another model, shape or type, for
// another block, with other tokens, without the secret, or that were cut or
// changed anywhere are refused, never loaded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ladder/engine/keyed_hash.h"
#include "ladder/kv/block_hash.h"
#include "ladder/kv/block_pool.h"
#include "ladder/model/kv_cache_storage.h"

namespace ladder::engine {

struct KvBlockHeader {
    char magic[8];
    uint32_t version;
    // The K and V row types as ggml numbers them (tensor::DType): a block of
    // another cache type is a miss.
    uint16_t key_dtype;
    uint16_t value_dtype;
    uint64_t model_key;
    uint32_t n_layers;
    uint32_t n_kv_heads;
    uint32_t head_dim;
    uint32_t block_size;
    uint64_t hash_low;
    uint64_t hash_high;
    uint64_t payload_bytes;  // token ids and K/V after the header
    // KeyedHash over this header (with these two fields zero) and the payload.
    uint64_t checksum_low;
    uint64_t checksum_high;
};
static_assert(sizeof(KvBlockHeader) == 80);

class KvBlockCodec {
public:
    KvBlockCodec(uint64_t model_key, const model::KvCacheShape& shape,
                 const KeyedHash::Secret& secret);

    // Bytes of one encoded full block.
    int64_t encoded_bytes() const;
    // The block's header, tokens and K/V (read from storage at block).
    std::vector<uint8_t> encode(const kv::BlockHash& hash, std::span<const int32_t> tokens,
                                const model::KvCacheStorage& storage, kv::BlockId block) const;
    // Whether bytes are this block, of this model, shape and type, with
    // these tokens and the checksum only the secret gives.
    bool valid(std::span<const uint8_t> bytes, const kv::BlockHash& hash,
               std::span<const int32_t> tokens) const;
    // Checks bytes (valid()) and copies their K/V into storage at block; false,
    // storage untouched, when they are not right.
    bool decode(std::span<const uint8_t> bytes, const kv::BlockHash& hash,
                std::span<const int32_t> tokens, model::KvCacheStorage& storage,
                kv::BlockId block) const;

    // The checksum of header (its checksum fields taken as zero) and payload:
    // tests forge blocks of another type with it.
    kv::BlockHash checksum(const KvBlockHeader& header, std::span<const uint8_t> payload) const;

private:
    int64_t layer_block_key_bytes() const;    // one layer's K of one block
    int64_t layer_block_value_bytes() const;  // one layer's V of one block

    KeyedHash checksum_;
    uint64_t model_key_;
    model::KvCacheShape shape_;
    int64_t kv_bytes_;  // K and V of one block, all layers
};

}  // namespace ladder::engine
