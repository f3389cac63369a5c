// A 64-bit identity of a model file, for KV blocks kept across restarts: a
// block computed by one model must never be loaded into another.
#pragma once

#include <cstdint>

namespace ladder::gguf {
class GgufFile;
}

namespace ladder::engine {

// Hashes the file's header (every metadata key and value, every tensor's
// name, type, shape and offset), its size, and samples of the tensor data at
// the start, middle and end: fine-tunes that share a layout still differ.
uint64_t model_identity(const gguf::GgufFile& file);

}  // namespace ladder::engine
