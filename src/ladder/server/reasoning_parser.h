// Splits a reasoning model's output into its reasoning and its answer, as
// vLLM's deepseek_r1 parser does: everything before </think> is reasoning
// (a <think> that opens it is dropped; templates often write it into the
// prompt), everything after is content. Output without </think> is all
// reasoning. Works as the text arrives, holding back only a tail that could
// start </think>.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ladder/server/marker_scanner.h"

namespace ladder::server {

struct ReasonedText {
    std::string reasoning;
    std::string content;
};

class ReasoningParser {
public:
    ReasonedText push(std::string_view text);
    ReasonedText finish();

private:
    enum class State { Start, Reasoning, Content };
    void feed(char c, ReasonedText& out);

    State state_ = State::Start;
    std::string start_;  // the output's first characters, while they may spell <think>
    MarkerScanner end_{{"</think>"}};
};

// "deepseek_r1" (vLLM's name), or "none".
std::span<const std::string_view> reasoning_parser_names();
// A reasoning parser fits a template that writes <think> ... </think>.
bool template_reasons(std::string_view chat_template);

}  // namespace ladder::server
