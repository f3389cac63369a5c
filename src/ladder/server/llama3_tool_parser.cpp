// Llama 3.x JSON tool calling: the output is the call, {"name": ...,
// "parameters": ...} ("arguments" too), bare or after <|python_tag|>;
// several are separated by `;`. Output that opens with JSON of another
// shape is content.
#include <utility>

#include "ladder/server/json_call_reader.h"
#include "ladder/server/marker_scanner.h"
#include "ladder/server/tool_call_formats.h"

namespace ladder::server {

namespace {

class Llama3JsonParser final : public ToolCallParser {
public:
    explicit Llama3JsonParser(IdSource ids) : ToolCallParser(std::move(ids)) {}

private:
    enum class State { Start, Text, Call, Between };

    void feed(char c) override {
        switch (state_) {
            case State::Start:
                // A bare call can only open the output.
                if (is_json_space(c)) {
                    leading_ += c;
                    return;
                }
                if (c == '{') {
                    begin_call(std::exchange(leading_, {}));
                    state_ = State::Call;
                    feed_object(c);
                    return;
                }
                emit_content(std::exchange(leading_, {}));
                state_ = State::Text;
                feed(c);
                return;
            case State::Text: {
                std::string passed;
                const int marker = python_tag_.feed(c, passed);
                emit_content(passed);
                if (marker >= 0) {
                    begin_call("<|python_tag|>");
                    state_ = State::Call;
                }
                return;
            }
            case State::Call:
                feed_object(c);
                return;
            case State::Between:
                if (is_json_space(c)) return;
                if (c == ';') {
                    begin_call(";");
                    state_ = State::Call;
                    return;
                }
                state_ = State::Text;
                feed(c);
                return;
        }
    }

    void feed_object(char c) {
        switch (feed_call(c)) {
            case JsonCallReader::Status::Reading:
                break;
            case JsonCallReader::Status::Done:
                state_ = State::Between;
                break;
            case JsonCallReader::Status::NotACall:
                state_ = State::Text;
                break;
        }
    }

    void end() override {
        if (state_ == State::Start) emit_content(leading_);
        if (state_ == State::Text) emit_content(python_tag_.flush());
        if (state_ == State::Call) end_call();
    }

    State state_ = State::Start;
    std::string leading_;  // whitespace before the first character
    MarkerScanner python_tag_{{"<|python_tag|>"}};
};

}  // namespace

std::unique_ptr<ToolCallParser> make_llama3_json_parser(ToolCallParser::IdSource ids) {
    return std::make_unique<Llama3JsonParser>(std::move(ids));
}

}  // namespace ladder::server
