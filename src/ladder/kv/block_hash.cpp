#include "ladder/kv/block_hash.h"

// The streaming state on the stack needs its definition.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace ladder::kv {

BlockHash hash_block(const BlockHash& parent, std::span<const int32_t> tokens,
                     std::span<const uint64_t> extra_keys) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    XXH3_128bits_update(&state, &parent, sizeof(parent));
    XXH3_128bits_update(&state, tokens.data(), tokens.size_bytes());
    // The count first, so that keys can never be read as tokens of another
    // block size.
    if (!extra_keys.empty()) {
        const uint64_t n_keys = extra_keys.size();
        XXH3_128bits_update(&state, &n_keys, sizeof(n_keys));
        XXH3_128bits_update(&state, extra_keys.data(), extra_keys.size_bytes());
    }
    const XXH128_hash_t digest = XXH3_128bits_digest(&state);
    return {digest.low64, digest.high64};
}

BlockHash root_hash(uint64_t model_key) {
    const XXH128_hash_t digest = XXH3_128bits(&model_key, sizeof(model_key));
    return {digest.low64, digest.high64};
}

}  // namespace ladder::kv
