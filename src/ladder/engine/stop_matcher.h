// Stop strings on a stream of text deltas. A stop string may span token
// boundaries, so text that could still be the start of one is held back, and
// only as long as it could: everything else is released at once. The stop
// string itself, and what follows it, is never released.
//
// Matching is Knuth-Morris-Pratt per stop string: each byte of output costs
// amortised O(1) per stop string, whatever their lengths, so the engine
// thread's time does not depend on what a client put in `stop`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/util/shared_value.h"

namespace ladder::engine {

// A request's stop strings with their KMP tables: built once (off the engine
// thread) and shared, read-only, by the request's choices.
class StopStrings {
public:
    StopStrings() = default;
    // Empty strings are dropped: they would match everywhere (OpenAI ignores them).
    explicit StopStrings(std::vector<std::string> stops);

    size_t size() const { return patterns_.size(); }
    bool empty() const { return patterns_.empty(); }
    const std::string& text(size_t i) const { return patterns_[i].text; }
    std::vector<std::string> texts() const;
    // Given that the last `matched` bytes of the stream are the start of stop
    // string i, the same after one more byte.
    int32_t advance(size_t i, int32_t matched, char byte) const;

private:
    struct Pattern {
        std::string text;
        // failure[k]: the longest proper prefix of text[0..k] that is also its suffix.
        std::vector<int32_t> failure;
    };
    std::vector<Pattern> patterns_;
};

class StopMatcher {
public:
    explicit StopMatcher(util::Shared<StopStrings> stops);

    struct Result {
        std::string text;      // safe to release now
        bool stopped = false;  // a stop string was found; the stream ends
    };
    // Adds a delta of text; returns what can be released. Of several stop
    // strings found in one delta, the one that starts earliest wins.
    Result push(std::string_view delta);
    // The end of the stream without a stop string: what was held back.
    std::string flush();

private:
    util::Shared<StopStrings> stops_;
    std::vector<int32_t> matched_;  // per stop string: bytes at the end of the stream that begin it
    std::string held_;              // the longest of those, not released yet
};

}  // namespace ladder::engine
