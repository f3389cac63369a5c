#include "ladder/engine/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace ladder::engine {

StopStrings::StopStrings(std::vector<std::string> stops) {
    for (std::string& text : stops) {
        if (text.empty()) continue;
        Pattern pattern{std::move(text), {}};
        const std::string& s = pattern.text;
        pattern.failure.assign(s.size(), 0);
        for (size_t k = 1, n = 0; k < s.size(); ++k) {
            while (n > 0 && s[k] != s[n]) n = static_cast<size_t>(pattern.failure[n - 1]);
            if (s[k] == s[n]) ++n;
            pattern.failure[k] = static_cast<int32_t>(n);
        }
        patterns_.push_back(std::move(pattern));
    }
}

std::vector<std::string> StopStrings::texts() const {
    std::vector<std::string> texts;
    for (const Pattern& pattern : patterns_) texts.push_back(pattern.text);
    return texts;
}

int32_t StopStrings::advance(size_t i, int32_t matched, char byte) const {
    const Pattern& pattern = patterns_[i];
    // A whole match has nowhere to grow: continue from its longest border.
    if (static_cast<size_t>(matched) == pattern.text.size())
        matched = pattern.failure[static_cast<size_t>(matched) - 1];
    while (matched > 0 && pattern.text[static_cast<size_t>(matched)] != byte)
        matched = pattern.failure[static_cast<size_t>(matched) - 1];
    return pattern.text[static_cast<size_t>(matched)] == byte ? matched + 1 : matched;
}

StopMatcher::StopMatcher(util::Shared<StopStrings> stops)
    : stops_(std::move(stops)), matched_(stops_->size(), 0) {}

StopMatcher::Result StopMatcher::push(std::string_view delta) {
    const StopStrings& stops = *stops_;
    if (stops.empty()) return {std::string(delta), false};
    // Positions below in held_ + delta; held_ never holds a whole stop string,
    // so every match ends inside delta.
    const size_t base = held_.size();
    held_.append(delta);
    size_t first = std::string::npos;  // where the earliest match starts
    size_t keep = 0;                   // the longest partial match at the end
    for (size_t i = 0; i < stops.size(); ++i) {
        const auto length = static_cast<int32_t>(stops.text(i).size());
        int32_t matched = matched_[i];
        for (size_t k = 0; k < delta.size(); ++k) {
            matched = stops.advance(i, matched, delta[k]);
            if (matched == length) {
                // A stop string's earliest end is also its earliest start.
                first = std::min(first, base + k + 1 - static_cast<size_t>(length));
                break;
            }
        }
        matched_[i] = matched;
        keep = std::max(keep, static_cast<size_t>(matched));
    }
    if (first != std::string::npos) {
        Result result{held_.substr(0, first), true};
        held_.clear();
        return result;
    }
    Result result{held_.substr(0, held_.size() - keep), false};
    held_.erase(0, held_.size() - keep);
    return result;
}

std::string StopMatcher::flush() {
    std::fill(matched_.begin(), matched_.end(), 0);
    return std::exchange(held_, {});
}

}  // namespace ladder::engine
