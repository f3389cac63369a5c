#include "ladder/server/reasoning_parser.h"

#include <array>
#include <utility>

namespace ladder::server {

namespace {

constexpr std::string_view kThink = "<think>";
constexpr std::array<std::string_view, 2> kNames = {"deepseek_r1", "none"};

}  // namespace

ReasonedText ReasoningParser::push(std::string_view text) {
    ReasonedText out;
    for (char c : text) feed(c, out);
    return out;
}

void ReasoningParser::feed(char c, ReasonedText& out) {
    switch (state_) {
        case State::Start:
            // Leading whitespace and a <think> that opens the output are not reasoning.
            if (start_.empty() && (c == ' ' || c == '\n' || c == '\r' || c == '\t')) return;
            start_ += c;
            if (kThink.substr(0, start_.size()) == start_) {
                if (start_.size() == kThink.size()) {
                    start_.clear();
                    state_ = State::Reasoning;
                }
                return;
            }
            state_ = State::Reasoning;
            for (char held : std::exchange(start_, {})) feed(held, out);
            return;
        case State::Reasoning:
            if (end_.feed(c, out.reasoning) >= 0) state_ = State::Content;
            return;
        case State::Content:
            out.content += c;
            return;
    }
}

ReasonedText ReasoningParser::finish() {
    ReasonedText out;
    if (state_ == State::Start) {
        state_ = State::Reasoning;
        for (char held : std::exchange(start_, {})) feed(held, out);
    }
    if (state_ == State::Reasoning) out.reasoning += end_.flush();
    return out;
}

std::span<const std::string_view> reasoning_parser_names() { return kNames; }

bool template_reasons(std::string_view chat_template) {
    return chat_template.find("<think>") != std::string_view::npos &&
           chat_template.find("</think>") != std::string_view::npos;
}

}  // namespace ladder::server
