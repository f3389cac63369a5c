// This machine's memory read bandwidth, the figure that bounds decode: every
// thread of the pool streams its share of a buffer far larger than the
// last-level cache, summing it with SIMD loads so the loop is bound by the
// reads, and the fastest of a few passes counts.
#pragma once

#include <cstdint>

namespace ladder::util {
class ThreadPool;
}

namespace ladder::tools {

struct MemoryBandwidth {
    double bytes_per_second = 0;
    uint64_t buffer_bytes = 0;
    int n_passes = 0;
    int n_threads = 0;
};

// 8 × the last-level cache and at least 1 GiB, so no level of cache holds a
// useful share of it; at most a quarter of the machine's memory.
uint64_t default_bandwidth_buffer_bytes();

// buffer_bytes is rounded down to whole chunks of 1 MiB (at least one).
// Throws util::InputError when the buffer cannot be allocated.
MemoryBandwidth measure_read_bandwidth(util::ThreadPool& pool, uint64_t buffer_bytes, int n_passes);

}  // namespace ladder::tools
