// Bytes from the kernel's random source (getrandom): secrets, never
// predictable from anything a client sees.
#pragma once

#include <cstdint>
#include <span>

namespace ladder::util {

// Fills out; aborts if the kernel cannot give random bytes (a broken system,
// not bad input: nothing could be done safely without them).
void random_bytes(std::span<uint8_t> out);

}  // namespace ladder::util
