#include "ladder/server/marker_scanner.h"

namespace ladder::server {

bool MarkerScanner::is_prefix_of_marker(std::string_view text) const {
    for (const std::string& marker : markers_) {
        if (std::string_view(marker).substr(0, text.size()) == text) return true;
    }
    return false;
}

int MarkerScanner::feed(char c, std::string& passed) {
    held_ += c;
    for (size_t i = 0; i < markers_.size(); ++i) {
        if (held_ == markers_[i]) {
            held_.clear();
            return static_cast<int>(i);
        }
    }
    // Give up characters from the front until the rest may still be a marker.
    size_t start = 0;
    while (start < held_.size() && !is_prefix_of_marker(std::string_view(held_).substr(start))) {
        ++start;
    }
    passed.append(held_, 0, start);
    held_.erase(0, start);
    return -1;
}

std::string MarkerScanner::flush() {
    std::string held;
    held.swap(held_);
    return held;
}

}  // namespace ladder::server
