#include "ladder/cli/machine_ceilings.h"

#include <fmt/format.h>

#include <cstdio>

#include "ladder/tools/report_format.h"

namespace ladder::cli {

namespace {
constexpr int kBandwidthPasses = 5;
}  // namespace

tools::MemoryBandwidth measure_bandwidth_with_progress(util::ThreadPool& pool) {
    const uint64_t bytes = tools::default_bandwidth_buffer_bytes();
    std::fprintf(stderr, "measuring memory read bandwidth over %s...\n",
                 tools::format_bytes(bytes).c_str());
    return tools::measure_read_bandwidth(pool, bytes, kBandwidthPasses);
}

tools::MemoryBandwidth measure_sized_bandwidth_with_progress(util::ThreadPool& pool,
                                                             uint64_t buffer_bytes) {
    std::fprintf(stderr, "measuring the read rate of a %s buffer...\n",
                 tools::format_bytes(buffer_bytes).c_str());
    return tools::measure_read_bandwidth(pool, buffer_bytes, kBandwidthPasses);
}

std::vector<tools::KernelPeak> measure_kernel_peaks_with_progress(
    const gguf::GgufFile& file, const tools::ModelTraffic& traffic, util::ThreadPool& pool) {
    std::fprintf(stderr, "measuring the matmul kernels' peak for each weight type...\n");
    return tools::measure_kernel_peaks(file, traffic, pool);
}

std::string describe(const tools::MemoryBandwidth& bandwidth) {
    return fmt::format(
        "{:.1f} GB/s memory read bandwidth ({} buffer, best of {} passes, {} threads)",
        bandwidth.bytes_per_second / 1e9, tools::format_bytes(bandwidth.buffer_bytes),
        bandwidth.n_passes, bandwidth.n_threads);
}

std::string describe(std::span<const tools::KernelPeak> peaks) {
    std::string out;
    for (const tools::KernelPeak& peak : peaks) {
        if (!out.empty()) out += ", ";
        out += fmt::format("{} {:.1f} GOP/s ({}, {} x {})", tensor::dtype_name(peak.dtype),
                           peak.ops_per_second / 1e9, peak.matrix_name, peak.n_out, peak.n_in);
    }
    if (peaks.empty()) return out;
    return out + fmt::format("; {} activation rows, {} threads", peaks.front().n_rows,
                             peaks.front().n_threads);
}

}  // namespace ladder::cli
