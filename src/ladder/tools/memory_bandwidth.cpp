#include "ladder/tools/memory_bandwidth.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "ladder/kernels/cpu/cpu_features.h"
#include "ladder/tools/device_presets.h"
#include "ladder/tools/fit.h"
#include "ladder/tools/machine_info.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace ladder::tools {

namespace {

// One task of a pass: large enough that claiming it costs nothing beside
// reading it, small enough that threads finish a pass together.
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr size_t kBytesPerIteration = 128;  // four 32-byte loads in flight

// An anonymous mapping rather than the heap: it is returned to the OS at once,
// and it can ask for huge pages so the TLB does not bound the stream.
class MappedBuffer {
public:
    explicit MappedBuffer(size_t bytes) : bytes_(bytes) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            util::fail("cannot allocate {} MiB to measure memory bandwidth", bytes >> 20);
        }
        madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without it the numbers are a little lower
        data_ = static_cast<uint8_t*>(p);
    }
    ~MappedBuffer() { munmap(data_, bytes_); }
    MappedBuffer(const MappedBuffer&) = delete;
    MappedBuffer& operator=(const MappedBuffer&) = delete;

    uint8_t* data() const { return data_; }

private:
    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
};

using SumFn = uint64_t (*)(const uint8_t* data, size_t n_bytes);

// n_bytes is a whole number of iterations; data is 32-byte aligned (page aligned chunks).
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint8_t* data, size_t n_bytes) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n_bytes; i += kBytesPerIteration) {
        const auto* p = reinterpret_cast<const __m256i*>(data + i);
        a0 = _mm256_add_epi64(a0, _mm256_load_si256(p));
        a1 = _mm256_add_epi64(a1, _mm256_load_si256(p + 1));
        a2 = _mm256_add_epi64(a2, _mm256_load_si256(p + 2));
        a3 = _mm256_add_epi64(a3, _mm256_load_si256(p + 3));
    }
    const __m256i sum = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// Baseline x86-64: the compiler turns the four chains into SSE2 adds.
uint64_t sum_portable(const uint8_t* data, size_t n_bytes) {
    uint64_t a[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n_bytes; i += 4 * sizeof(uint64_t)) {
        uint64_t words[4];
        std::memcpy(words, data + i, sizeof words);
        for (int j = 0; j < 4; ++j) a[j] += words[j];
    }
    return a[0] + a[1] + a[2] + a[3];
}

SumFn best_sum() { return kernels::cpu::cpu_features().avx2 ? sum_avx2 : sum_portable; }

// Keeps the sums alive so the compiler cannot drop the reads.
volatile uint64_t g_sink = 0;

}  // namespace

uint64_t default_bandwidth_buffer_bytes() {
    const uint64_t wanted = std::max(kGiB, 8 * last_level_cache_bytes());
    return std::min(wanted, host_memory_bytes() / 4);
}

MemoryBandwidth measure_read_bandwidth(util::ThreadPool& pool, uint64_t buffer_bytes,
                                       int n_passes) {
    const int64_t n_chunks = std::max<int64_t>(1, static_cast<int64_t>(buffer_bytes / kChunkBytes));
    const size_t bytes = static_cast<size_t>(n_chunks) * kChunkBytes;
    MappedBuffer buffer(bytes);
    // First touch from the pool, so the pages are resident (and, on a
    // multi-node machine, spread as the readers are) before any pass is timed.
    pool.parallel_for(n_chunks, [&](int64_t chunk) {
        std::memset(buffer.data() + chunk * kChunkBytes, static_cast<int>(1 + chunk % 127),
                    kChunkBytes);
    });

    const SumFn sum = best_sum();
    std::vector<uint64_t> chunk_sums(static_cast<size_t>(n_chunks));
    double best_seconds = std::numeric_limits<double>::infinity();
    for (int pass = 0; pass < std::max(1, n_passes); ++pass) {
        const double start = util::now_seconds();
        pool.parallel_for(n_chunks, [&](int64_t chunk) {
            chunk_sums[static_cast<size_t>(chunk)] =
                sum(buffer.data() + chunk * kChunkBytes, kChunkBytes);
        });
        best_seconds = std::min(best_seconds, util::now_seconds() - start);
        uint64_t total = 0;
        for (const uint64_t s : chunk_sums) total += s;
        g_sink = g_sink + total;
    }

    MemoryBandwidth result;
    result.buffer_bytes = bytes;
    result.n_passes = std::max(1, n_passes);
    result.n_threads = pool.n_threads();
    result.bytes_per_second = static_cast<double>(bytes) / best_seconds;
    return result;
}

}  // namespace ladder::tools
