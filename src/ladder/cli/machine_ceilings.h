// The two machine figures `ladder bench-model` and `ladder roofline` compare
// against: memory read bandwidth and the matrix kernels' peaks. Measuring
// takes seconds, so each says on stderr what it is doing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ladder/tools/kernel_peak.h"
#include "ladder/tools/memory_bandwidth.h"
#include "ladder/tools/model_traffic.h"

namespace ladder::gguf {
class GgufFile;
}
namespace ladder::util {
class ThreadPool;
}

namespace ladder::cli {

tools::MemoryBandwidth measure_bandwidth_with_progress(util::ThreadPool& pool);
// The same read loop over a buffer of the given size (e.g. a model's weights,
// which a large last-level cache may partly hold between decode steps).
tools::MemoryBandwidth measure_sized_bandwidth_with_progress(util::ThreadPool& pool,
                                                             uint64_t buffer_bytes);
std::vector<tools::KernelPeak> measure_kernel_peaks_with_progress(
    const gguf::GgufFile& file, const tools::ModelTraffic& traffic, util::ThreadPool& pool);

// "45.2 GB/s memory read bandwidth (2.03 GiB buffer, best of 5 passes, 2 threads)"
std::string describe(const tools::MemoryBandwidth& bandwidth);
// "Q4_1 130.2 GOP/s (blk.0.ffn_down.weight, 576 x 1536), Q8_0 ...; 64 activation rows, 2 threads"
std::string describe(std::span<const tools::KernelPeak> peaks);

}  // namespace ladder::cli
