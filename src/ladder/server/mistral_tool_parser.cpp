// Mistral: [TOOL_CALLS] then a JSON list of {"name": ..., "arguments": ...}
// (v3 and Tekken templates), or a single object, or the newer
// [TOOL_CALLS]name[ARGS]{...} (optionally [CALL_ID]id before [ARGS]), one
// [TOOL_CALLS] per call.
#include <utility>

#include <algorithm>

#include "ladder/server/json_call_reader.h"
#include "ladder/server/marker_scanner.h"
#include "ladder/server/tool_call_formats.h"

namespace ladder::server {

namespace {

constexpr const char* kMarker = "[TOOL_CALLS]";
// A function name longer than this after [TOOL_CALLS] is no name.
constexpr size_t kMaxNameBytes = 256;

std::string trimmed(std::string_view text) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const size_t last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

class MistralParser final : public ToolCallParser {
public:
    explicit MistralParser(IdSource ids) : ToolCallParser(std::move(ids)) {}

private:
    enum class State { Text, AfterMarker, List, ListObject, ListNext, Object, Name, Arguments };

    void feed(char c) override {
        switch (state_) {
            case State::Text: {
                std::string passed;
                const int marker = marker_.feed(c, passed);
                emit_content(passed);
                if (marker >= 0) {
                    raw_ = kMarker;
                    state_ = State::AfterMarker;
                }
                return;
            }
            case State::AfterMarker:
                if (is_json_space(c)) {
                    raw_ += c;
                    return;
                }
                if (c == '[') {
                    raw_ += c;
                    state_ = State::List;
                } else if (c == '{') {
                    begin_call(std::exchange(raw_, {}));
                    state_ = State::Object;
                    feed_object(c, State::Text);
                } else {
                    name_.clear();
                    state_ = State::Name;
                    feed(c);
                }
                return;
            case State::List:
                if (is_json_space(c)) {
                    raw_ += c;
                    return;
                }
                if (c == '{') {
                    begin_call(std::exchange(raw_, {}));
                    state_ = State::ListObject;
                    feed_object(c, State::ListNext);
                    return;
                }
                give_back(c);
                return;
            case State::ListObject:
                feed_object(c, State::ListNext);
                return;
            case State::ListNext:
                if (is_json_space(c)) return;
                if (c == ',') {
                    state_ = State::List;
                } else if (c == ']') {
                    state_ = State::Text;
                } else {
                    state_ = State::Text;
                    feed(c);
                }
                return;
            case State::Object:
                feed_object(c, State::Text);
                return;
            case State::Name:
                raw_ += c;
                name_ += c;
                if (ends_with(name_, "[ARGS]")) {
                    std::string name = trimmed(name_.substr(0, name_.size() - 6));
                    // [CALL_ID]id: the id is the model's; ours replaces it.
                    if (const size_t id = name.find("[CALL_ID]"); id != std::string::npos) {
                        name = trimmed(name.substr(0, id));
                    }
                    if (name.empty()) return give_back_raw();
                    open_call(name);
                    arguments_ = JsonValueScanner();
                    state_ = State::Arguments;
                } else if (name_.size() > kMaxNameBytes || c == '{' || c == '\n') {
                    give_back_raw();
                }
                return;
            case State::Arguments:
                feed_arguments(c);
                return;
        }
    }

    void feed_object(char c, State after) {
        switch (feed_call(c)) {
            case JsonCallReader::Status::Reading:
                break;
            case JsonCallReader::Status::Done:
                state_ = after;
                break;
            case JsonCallReader::Status::NotACall:
                state_ = State::Text;
                break;
        }
    }

    void feed_arguments(char c) {
        switch (arguments_.feed(c)) {
            case JsonValueScanner::Step::Inside:
                if (arguments_.started()) append_arguments(std::string_view(&c, 1));
                break;
            case JsonValueScanner::Step::EndedWith:
                append_arguments(std::string_view(&c, 1));
                state_ = State::Text;
                break;
            case JsonValueScanner::Step::EndedBefore:
                state_ = State::Text;
                feed(c);
                break;
            case JsonValueScanner::Step::Invalid:
                state_ = State::Text;
                emit_content(std::string_view(&c, 1));
                break;
        }
    }

    // What followed [TOOL_CALLS] was no call: it is content.
    void give_back(char c) {
        raw_ += c;
        give_back_raw();
    }
    void give_back_raw() {
        emit_content(std::exchange(raw_, {}));
        state_ = State::Text;
    }

    void end() override {
        switch (state_) {
            case State::Text:
                emit_content(marker_.flush());
                break;
            case State::AfterMarker:
            case State::List:
            case State::Name:
                give_back_raw();
                break;
            case State::ListObject:
            case State::Object:
                end_call();
                break;
            case State::ListNext:
            case State::Arguments:
                break;
        }
    }

    State state_ = State::Text;
    MarkerScanner marker_{{kMarker}};
    std::string raw_;  // since [TOOL_CALLS], until a call opens
    std::string name_;
    JsonValueScanner arguments_;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_mistral_parser(ToolCallParser::IdSource ids) {
    return std::make_unique<MistralParser>(std::move(ids));
}

}  // namespace ladder::server
