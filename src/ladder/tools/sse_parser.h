// Server-sent events as the WHATWG spec frames them: bytes in, in whatever
// pieces the network delivers, events out. Knows nothing of what the data
// means (bench_stream reads OpenAI's chunks from it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::tools {

struct SseEvent {
    std::string type;  // the `event:` field; empty for the default "message"
    std::string data;  // the `data:` lines, joined with '\n'
};

class SseParser {
public:
    // Parses what arrived and appends the events it completed. A line may be
    // split anywhere, even between the '\r' and '\n' of its end.
    void feed(std::string_view bytes, std::vector<SseEvent>& events);
    // The stream closed: an event still waiting for its blank line is
    // delivered anyway (the spec drops it; servers that forget the last
    // blank line are common enough to be lenient).
    void finish(std::vector<SseEvent>& events);

    int64_t n_data_lines() const { return n_data_lines_; }
    int64_t n_comment_lines() const { return n_comment_lines_; }

private:
    void end_line(std::vector<SseEvent>& events);
    void dispatch(std::vector<SseEvent>& events);

    std::string line_;
    SseEvent pending_;
    bool has_data_ = false;
    // A line ended at '\r': a '\n' right after it belongs to the same end.
    bool after_cr_ = false;
    int64_t n_data_lines_ = 0;
    int64_t n_comment_lines_ = 0;
};

}  // namespace ladder::tools
