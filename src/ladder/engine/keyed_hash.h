// A 128-bit hash keyed by a secret (XXH3 with a custom secret): whoever lacks
// the secret can neither compute nor predict it. Keys the disk tier's block
// checksums (a file planted or copied in without the directory's secret is
// rejected) and turns cache salts into block-hash extra keys (a tenant cannot
// aim a salt at another's). It is not a cryptographic MAC: it stands against
// parties that never see the secret or any hash made with it, which holds
// here because neither leaves the process and its 0600 files.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "ladder/kv/block_hash.h"

namespace ladder::engine {

class KeyedHash {
public:
    static constexpr size_t kSecretBytes = 192;
    using Secret = std::array<uint8_t, kSecretBytes>;

    // A fresh random secret.
    static Secret random_secret();

    explicit KeyedHash(const Secret& secret) : secret_(secret) {}

    // The hash of the concatenated parts.
    kv::BlockHash operator()(std::initializer_list<std::span<const uint8_t>> parts) const;
    kv::BlockHash operator()(std::string_view text) const;

private:
    Secret secret_;
};

}  // namespace ladder::engine
