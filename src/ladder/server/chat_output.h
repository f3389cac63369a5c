// What the chat endpoint makes of one choice's text: the reasoning (a
// reasoning parser's), the content, and the tool calls (a tool-call
// parser's), piece by piece as it arrives. A stream sends the pieces as
// deltas; a whole response joins them, so both say the same.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/server/reasoning_parser.h"
#include "ladder/server/tool_call_parser.h"

namespace ladder::server {

struct ChatOutputOptions {
    std::optional<ToolCallFormat> tool_calls;  // parse calls in this format
    bool reasoning = false;                    // split off <think> ... </think>
    bool active() const { return tool_calls.has_value() || reasoning; }
};

struct MessageDelta {
    std::string content;
    std::string reasoning_content;
    std::vector<ToolCallFragment> tool_calls;
    bool tool_calls_made = false;  // set on a finished choice's last delta
    bool empty() const {
        return content.empty() && reasoning_content.empty() && tool_calls.empty();
    }
};

class ChatOutputParser {
public:
    explicit ChatOutputParser(const ChatOutputOptions& options);
    MessageDelta push(std::string_view text);
    MessageDelta finish();

private:
    void parse_content(std::string_view text, MessageDelta& delta, bool last);

    std::unique_ptr<ReasoningParser> reasoning_;
    std::unique_ptr<ToolCallParser> tool_calls_;
};

// A whole assistant message, gathered from its deltas.
class AssistantMessage {
public:
    explicit AssistantMessage(bool reasoning = false) : reasoning_(reasoning) {}
    void add(const MessageDelta& delta);
    bool has_tool_calls() const { return !calls_.empty(); }
    // {"role": "assistant", "content", ["reasoning_content"], ["tool_calls"]}:
    // content is null when there is none beside calls or reasoning.
    nlohmann::json to_json() const;

private:
    struct Call {
        std::string id;
        std::string name;
        std::string arguments;
    };
    bool reasoning_;
    std::string content_;
    std::string reasoning_content_;
    std::vector<Call> calls_;
};

// more after into, in one delta (a call's text joins its fragment).
void append_delta(MessageDelta& into, MessageDelta&& more);

// The delta object of a stream chunk for these pieces (without "role").
nlohmann::json delta_json(const MessageDelta& delta);

}  // namespace ladder::server
