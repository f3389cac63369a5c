#include "ladder/server/server_config.h"

#include <algorithm>

namespace ladder::server {

int64_t default_max_queue(int32_t max_num_seqs) { return int64_t{4} * max_num_seqs; }

int handler_threads_for(unsigned n_cores) { return std::max(2, static_cast<int>(n_cores)); }

bool accepts_model_name(const ServerConfig& config, const std::string& name) {
    if (name.empty() || name == config.served_model_name) return true;
    const std::string& file = config.model_file_name;
    if (file.empty()) return false;
    constexpr std::string_view kExtension = ".gguf";
    const bool has_extension =
        file.size() > kExtension.size() &&
        file.compare(file.size() - kExtension.size(), kExtension.size(), kExtension) == 0;
    return name == file ||
           (has_extension && name == file.substr(0, file.size() - kExtension.size()));
}

}  // namespace ladder::server
