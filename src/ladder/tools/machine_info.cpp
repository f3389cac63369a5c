#include "ladder/tools/machine_info.h"

#include <unistd.h>

#include <ctime>
#include <fstream>

namespace ladder::tools {

std::string cpu_model_name() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (!line.starts_with("model name")) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) break;
        const size_t start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? std::string("unknown CPU") : line.substr(start);
    }
    return "unknown CPU";
}

uint64_t last_level_cache_bytes() {
    for (const int level : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long bytes = sysconf(level);
        if (bytes > 0) return static_cast<uint64_t>(bytes);
    }
    return 0;
}

std::string utc_timestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace ladder::tools
