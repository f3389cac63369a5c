#include "ladder/engine/model_identity.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>

#include "ladder/gguf/gguf_file.h"

namespace ladder::engine {

uint64_t model_identity(const gguf::GgufFile& file) {
    constexpr uint64_t kSampleBytes = 64 * 1024;
    const std::span<const uint8_t> bytes = file.bytes();
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    const uint64_t size = bytes.size();
    XXH3_64bits_update(&state, &size, sizeof(size));
    const uint64_t header = std::min<uint64_t>(file.data_offset_bytes(), size);
    XXH3_64bits_update(&state, bytes.data(), header);
    const uint64_t data = size - header;
    for (const uint64_t at : {header, header + data / 2, size - std::min(data, kSampleBytes)}) {
        XXH3_64bits_update(&state, bytes.data() + at, std::min(kSampleBytes, size - at));
    }
    return XXH3_64bits_digest(&state);
}

}  // namespace ladder::engine
