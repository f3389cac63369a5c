#include "ladder/engine/keyed_hash.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "ladder/util/check.h"
#include "ladder/util/random_bytes.h"

namespace ladder::engine {

static_assert(KeyedHash::kSecretBytes >= XXH3_SECRET_SIZE_MIN);

KeyedHash::Secret KeyedHash::random_secret() {
    Secret secret;
    util::random_bytes(secret);
    return secret;
}

kv::BlockHash KeyedHash::operator()(std::initializer_list<std::span<const uint8_t>> parts) const {
    XXH3_state_t state;
    LADDER_CHECK(XXH3_128bits_reset_withSecret(&state, secret_.data(), secret_.size()) == XXH_OK,
                 "XXH3 refused the secret");
    for (std::span<const uint8_t> part : parts)
        XXH3_128bits_update(&state, part.data(), part.size());
    const XXH128_hash_t digest = XXH3_128bits_digest(&state);
    return {digest.low64, digest.high64};
}

kv::BlockHash KeyedHash::operator()(std::string_view text) const {
    return (*this)({std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())});
}

}  // namespace ladder::engine
