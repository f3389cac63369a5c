// The identity of a full KV block for prefix caching: a 128-bit hash chained
// over (parent block's hash, this block's token ids, extra keys). Equal hashes
// mean equal prefixes up to a collision, which the pool rules out by comparing
// the stored token ids on every hit. A pure function: the scheduler never hashes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace ladder::kv {

struct BlockHash {
    uint64_t low = 0;
    uint64_t high = 0;
    bool operator==(const BlockHash&) const = default;
};

// The hash of a block given its parent's (for the first block, the root: a
// hash of whatever else changes the KV, such as the model's identity).
// extra_keys (vLLM's name) keep apart blocks whose tokens are equal but which
// must not be shared: a request's cache salt goes into its first block, and
// the chain carries it to every later one. No extra keys hash as before.
BlockHash hash_block(const BlockHash& parent, std::span<const int32_t> tokens,
                     std::span<const uint64_t> extra_keys = {});
// The root of every chain for one model.
BlockHash root_hash(uint64_t model_key);

struct BlockHashHasher {
    size_t operator()(const BlockHash& hash) const { return static_cast<size_t>(hash.low); }
};

}  // namespace ladder::kv
