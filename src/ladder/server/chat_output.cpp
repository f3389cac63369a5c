#include "ladder/server/chat_output.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

void append_fragments(std::vector<ToolCallFragment>& into, std::vector<ToolCallFragment>&& more) {
    for (ToolCallFragment& fragment : more) {
        // More text of the call the delta already holds joins it.
        if (fragment.id.empty() && !into.empty() && into.back().index == fragment.index) {
            into.back().arguments += fragment.arguments;
            continue;
        }
        into.push_back(std::move(fragment));
    }
}

void append(MessageDelta& into, ParsedOutput&& parsed) {
    into.content += parsed.content;
    append_fragments(into.tool_calls, std::move(parsed.tool_calls));
}

json fragment_json(const ToolCallFragment& fragment) {
    json call = {{"index", fragment.index}};
    json function = {{"arguments", fragment.arguments}};
    if (!fragment.id.empty()) {
        call["id"] = fragment.id;
        call["type"] = "function";
        function["name"] = fragment.name;
    }
    call["function"] = std::move(function);
    return call;
}

}  // namespace

ChatOutputParser::ChatOutputParser(const ChatOutputOptions& options) {
    if (options.reasoning) reasoning_ = std::make_unique<ReasoningParser>();
    if (options.tool_calls) tool_calls_ = make_tool_call_parser(*options.tool_calls);
}

void ChatOutputParser::parse_content(std::string_view text, MessageDelta& delta, bool last) {
    if (!tool_calls_) {
        delta.content += text;
        return;
    }
    append(delta, tool_calls_->push(text));
    if (last) {
        append(delta, tool_calls_->finish());
        delta.tool_calls_made = tool_calls_->found_calls();
    }
}

MessageDelta ChatOutputParser::push(std::string_view text) {
    MessageDelta delta;
    if (reasoning_) {
        ReasonedText split = reasoning_->push(text);
        delta.reasoning_content = std::move(split.reasoning);
        parse_content(split.content, delta, false);
    } else {
        parse_content(text, delta, false);
    }
    return delta;
}

MessageDelta ChatOutputParser::finish() {
    MessageDelta delta;
    std::string content;
    if (reasoning_) {
        ReasonedText split = reasoning_->finish();
        delta.reasoning_content = std::move(split.reasoning);
        content = std::move(split.content);
    }
    parse_content(content, delta, true);
    return delta;
}

void AssistantMessage::add(const MessageDelta& delta) {
    content_ += delta.content;
    reasoning_content_ += delta.reasoning_content;
    for (const ToolCallFragment& fragment : delta.tool_calls) {
        if (!fragment.id.empty()) calls_.push_back({fragment.id, fragment.name, ""});
        calls_[static_cast<size_t>(fragment.index)].arguments += fragment.arguments;
    }
}

json AssistantMessage::to_json() const {
    json message = {{"role", "assistant"}};
    // No content beside calls or reasoning is null, as OpenAI and vLLM send it.
    const bool other_parts = !calls_.empty() || !reasoning_content_.empty();
    message["content"] = content_.empty() && other_parts ? json(nullptr) : json(content_);
    if (reasoning_) {
        message["reasoning_content"] =
            reasoning_content_.empty() ? json(nullptr) : json(reasoning_content_);
    }
    if (!calls_.empty()) {
        json calls = json::array();
        for (const Call& call : calls_) {
            calls.push_back({{"id", call.id},
                             {"type", "function"},
                             {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
        }
        message["tool_calls"] = std::move(calls);
    }
    return message;
}

void append_delta(MessageDelta& into, MessageDelta&& more) {
    into.reasoning_content += more.reasoning_content;
    into.content += more.content;
    append_fragments(into.tool_calls, std::move(more.tool_calls));
    into.tool_calls_made = into.tool_calls_made || more.tool_calls_made;
}

json delta_json(const MessageDelta& delta) {
    json out = json::object();
    if (!delta.reasoning_content.empty()) out["reasoning_content"] = delta.reasoning_content;
    if (!delta.content.empty()) out["content"] = delta.content;
    if (!delta.tool_calls.empty()) {
        json calls = json::array();
        for (const ToolCallFragment& fragment : delta.tool_calls) {
            calls.push_back(fragment_json(fragment));
        }
        out["tool_calls"] = std::move(calls);
    }
    return out;
}

}  // namespace ladder::server
