// Stop strings on a stream of text deltas. A stop string may span token
// boundaries, so text that could still be the start of one is held back, and
// only as long as it could: everything else is released at once. The stop
// string itself, and what follows it, is never released.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ladder::engine {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops);

    struct Result {
        std::string text;      // safe to release now
        bool stopped = false;  // a stop string was found; the stream ends
    };
    // Adds a delta of text; returns what can be released.
    Result push(std::string_view delta);
    // The end of the stream without a stop string: what was held back.
    std::string flush();

private:
    // Bytes at the end of held_ that could begin a stop string.
    size_t longest_partial_match() const;

    std::vector<std::string> stops_;
    std::string held_;
};

}  // namespace ladder::engine
