// Finds marker strings ("<tool_call>", "</think>", ...) in text that arrives
// a character at a time, holding back only a tail that could still become
// one, so that everything else can be passed on at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ladder::server {

class MarkerScanner {
public:
    explicit MarkerScanner(std::vector<std::string> markers) : markers_(std::move(markers)) {}

    // Feeds c; text that can be no marker's start is appended to passed.
    // Returns the index of the marker that c completed, or -1.
    int feed(char c, std::string& passed);
    // The held tail, given up (the text ended).
    std::string flush();

private:
    bool is_prefix_of_marker(std::string_view text) const;

    std::vector<std::string> markers_;
    std::string held_;
};

}  // namespace ladder::server
