#include "ladder/engine/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace ladder::engine {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
    // An empty stop string would match everywhere; OpenAI ignores it.
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopMatcher::Result StopMatcher::push(std::string_view delta) {
    held_.append(delta);
    if (stops_.empty()) return {std::exchange(held_, {}), false};
    // The earliest stop string wins; held_ never contains a whole one, so a
    // match must end inside the new delta and search can start near it.
    size_t first = std::string::npos;
    for (const std::string& stop : stops_) {
        const size_t from = held_.size() - delta.size() >= stop.size() - 1
                                ? held_.size() - delta.size() - (stop.size() - 1)
                                : 0;
        const size_t at = held_.find(stop, from);
        if (at < first) first = at;
    }
    if (first != std::string::npos) {
        Result result{held_.substr(0, first), true};
        held_.clear();
        return result;
    }
    const size_t keep = longest_partial_match();
    Result result{held_.substr(0, held_.size() - keep), false};
    held_.erase(0, held_.size() - keep);
    return result;
}

std::string StopMatcher::flush() { return std::exchange(held_, {}); }

size_t StopMatcher::longest_partial_match() const {
    size_t longest = 0;
    for (const std::string& stop : stops_) {
        // Suffixes of held_ shorter than the stop string that are its prefix.
        const size_t max_len = std::min(held_.size(), stop.size() - 1);
        for (size_t len = max_len; len > longest; --len) {
            if (std::string_view(held_).substr(held_.size() - len) ==
                std::string_view(stop).substr(0, len)) {
                longest = len;
                break;
            }
        }
    }
    return longest;
}

}  // namespace ladder::engine
