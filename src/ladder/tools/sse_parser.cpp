#include "ladder/tools/sse_parser.h"

namespace ladder::tools {

void SseParser::feed(std::string_view bytes, std::vector<SseEvent>& events) {
    for (const char c : bytes) {
        if (c == '\n' && after_cr_) {
            after_cr_ = false;
            continue;
        }
        after_cr_ = c == '\r';
        if (c == '\r' || c == '\n') {
            end_line(events);
        } else {
            line_ += c;
        }
    }
}

void SseParser::finish(std::vector<SseEvent>& events) {
    if (!line_.empty()) end_line(events);
    dispatch(events);
}

void SseParser::end_line(std::vector<SseEvent>& events) {
    const std::string line = std::move(line_);
    line_.clear();
    if (line.empty()) return dispatch(events);
    if (line.front() == ':') {
        ++n_comment_lines_;  // keep-alives
        return;
    }
    const size_t colon = line.find(':');
    const std::string_view field = std::string_view(line).substr(0, colon);
    std::string_view value;
    if (colon != std::string::npos) {
        value = std::string_view(line).substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    }
    if (field == "data") {
        ++n_data_lines_;
        if (has_data_) pending_.data += '\n';
        pending_.data += value;
        has_data_ = true;
    } else if (field == "event") {
        pending_.type = std::string(value);
    }
    // `id:` and `retry:` steer reconnection, which a benchmark never does.
}

void SseParser::dispatch(std::vector<SseEvent>& events) {
    if (has_data_) events.push_back(std::move(pending_));
    pending_ = SseEvent{};
    has_data_ = false;
}

}  // namespace ladder::tools
