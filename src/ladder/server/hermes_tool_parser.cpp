// Hermes 2 Pro and Qwen2.5: each call a JSON object between <tool_call> and
// </tool_call>, text around and between them.
#include "ladder/server/marker_scanner.h"
#include "ladder/server/tool_call_formats.h"

namespace ladder::server {

namespace {

constexpr const char* kOpen = "<tool_call>";
constexpr const char* kClose = "</tool_call>";

class HermesParser final : public ToolCallParser {
public:
    explicit HermesParser(IdSource ids) : ToolCallParser(std::move(ids)) {}

private:
    enum class State { Text, Call, AfterCall };

    void feed(char c) override {
        switch (state_) {
            case State::Text: {
                std::string passed;
                const int marker = open_.feed(c, passed);
                emit_content(passed);
                if (marker >= 0) {
                    begin_call(kOpen);
                    state_ = State::Call;
                }
                break;
            }
            case State::Call:
                switch (feed_call(c)) {
                    case JsonCallReader::Status::Reading:
                        break;
                    case JsonCallReader::Status::Done:
                        state_ = State::AfterCall;
                        break;
                    case JsonCallReader::Status::NotACall:
                        // Given back as content, unless the call had opened.
                        state_ = call_opened() ? State::AfterCall : State::Text;
                        break;
                }
                break;
            case State::AfterCall: {
                // Whatever stands between the object and </tool_call> is dropped.
                std::string passed;
                if (close_.feed(c, passed) >= 0) state_ = State::Text;
                break;
            }
        }
    }

    void end() override {
        if (state_ == State::Text) emit_content(open_.flush());
        if (state_ == State::Call) end_call();
    }

    State state_ = State::Text;
    MarkerScanner open_{{kOpen}};
    MarkerScanner close_{{kClose}};
};

}  // namespace

std::unique_ptr<ToolCallParser> make_hermes_parser(ToolCallParser::IdSource ids) {
    return std::make_unique<HermesParser>(std::move(ids));
}

}  // namespace ladder::server
