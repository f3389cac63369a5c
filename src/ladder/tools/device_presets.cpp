// The device table. Each size is the "memory.total" nvidia-smi prints for the
// card (what CUDA and vLLM's gpu-memory-utilization start from), not the
// marketing figure: an "80 GB" H100 reports 81559 MiB.
#include "ladder/tools/device_presets.h"

#include <unistd.h>

#include <array>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Sizes as nvidia-smi reports them on each card (seen in many published
// nvidia-smi printouts). The names' "GB" are really GiB, less a little the
// driver keeps: the H200's 143771 MiB is 140.4 GiB.
constexpr std::array kDevices = {
    DevicePreset{"h200-141g", "NVIDIA H200 141GB HBM3e", 143771},
    DevicePreset{"h100-80g", "NVIDIA H100 80GB HBM3", 81559},
    DevicePreset{"a100-80g", "NVIDIA A100-SXM4-80GB", 81920},
    DevicePreset{"l40s-48g", "NVIDIA L40S 48GB", 46068},
    DevicePreset{"a100-40g", "NVIDIA A100-SXM4-40GB", 40960},
    DevicePreset{"rtx4090-24g", "NVIDIA GeForce RTX 4090 24GB", 24564},
    DevicePreset{"l4-24g", "NVIDIA L4 24GB", 23034},
};

}  // namespace

std::span<const DevicePreset> device_presets() {
    return kDevices;
}

std::string device_names() {
    std::string out;
    for (const auto& device : kDevices) {
        out += device.name;
        out += ", ";
    }
    return out + "cpu";
}

uint64_t host_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_bytes = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_bytes <= 0) util::fail("cannot read this machine's memory size");
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
}

Device find_device(std::string_view name) {
    for (const auto& device : kDevices) {
        if (device.name == name) {
            return Device{std::string(device.name), std::string(device.description),
                          device.memory_mib * kMiB};
        }
    }
    if (name == "cpu" || name == "cpu-ram") {
        return Device{"cpu", "this machine's RAM", host_memory_bytes()};
    }
    util::fail("unknown device '{}'; valid: {} (or --mem GiB)", name, device_names());
}

}  // namespace ladder::tools
