// The outputs of one API request's choices merged into one queue: the engine
// thread pushes (never blocks on the client), the connection's thread takes
// them in arrival order. A slow reader only lets its own queue grow, bounded
// by its max_tokens.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "ladder/engine/request.h"
#include "ladder/server/chat_output.h"

namespace ladder::server {

struct ChoiceOutput {
    int32_t choice = 0;  // index into the API request's choices
    engine::RequestOutput output;
    // Chat with tools or reasoning: the output's text as message pieces.
    std::optional<MessageDelta> message;
};

class ChoiceOutputs {
public:
    // Engine thread.
    void push(int32_t choice, engine::RequestOutput&& output);
    // Waits up to timeout for at least one output, then takes all there are
    // (none when the time ran out).
    std::vector<ChoiceOutput> take(std::chrono::milliseconds timeout);

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<ChoiceOutput> outputs_;
};

}  // namespace ladder::server
