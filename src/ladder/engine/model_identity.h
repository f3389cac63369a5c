// A 64-bit identity of a model file, for KV blocks kept across restarts: a
// block computed by one model must never be loaded into another.
#pragma once

#include <cstdint>

namespace ladder::gguf {
class GgufFile;
}

namespace ladder::engine {

class CacheDirectory;

// Hashes every byte of the file (XXH3-64: the header with every metadata key
// and tensor layout, and all tensor data), so files that differ anywhere,
// fine-tunes of one layout included, never share an identity.
uint64_t model_identity(const gguf::GgufFile& file);

// model_identity(), remembered in the cache directory by the file's device,
// inode, size and modification time, so a restart does not read the whole
// model again. The record lives with the blocks it keys: that directory is
// private to this user already, so no one else can plant an identity. A
// file parsed from memory is hashed every time.
uint64_t cached_model_identity(const gguf::GgufFile& file, const CacheDirectory& dir);

}  // namespace ladder::engine
