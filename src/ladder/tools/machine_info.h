// What this machine is, for reports and for sizing measurements: the CPU's
// name and its last-level cache. Read from the OS; knows nothing of models.
#pragma once

#include <cstdint>
#include <string>

namespace ladder::tools {

// "Intel(R) Xeon(R) Processor" from /proc/cpuinfo; "unknown CPU" when absent.
std::string cpu_model_name();

// Bytes of the largest cache level the OS reports; 0 when it reports none.
uint64_t last_level_cache_bytes();

// "2025-01-31T12:00:00Z": the current UTC time, as llama-bench's test_time.
std::string utc_timestamp();

}  // namespace ladder::tools
