// Devices `ladder fit --device` knows, as data: the memory each reports to
// the runtime. Knows nothing of models.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ladder::tools {

struct Device {
    std::string name;         // what --device takes: "h100-80g"
    std::string description;  // "NVIDIA H100 80GB HBM3"
    uint64_t memory_bytes;    // per device
};

struct DevicePreset {
    std::string_view name;
    std::string_view description;
    uint64_t memory_mib;  // total memory as nvidia-smi reports it, MiB
};

// GPUs, largest first. The CPU ("cpu", alias "cpu-ram") is not in the table:
// its memory is this machine's RAM.
std::span<const DevicePreset> device_presets();
// "h200-141g, h100-80g, ..., cpu".
std::string device_names();

// The named device; "cpu" / "cpu-ram" measure this machine's RAM. Throws
// util::InputError listing the valid names when name is unknown.
Device find_device(std::string_view name);
// Physical memory of this machine, bytes.
uint64_t host_memory_bytes();

}  // namespace ladder::tools
