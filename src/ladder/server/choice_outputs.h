// The outputs of one API request's choices merged into one queue: the engine
// thread pushes (never waiting on the client) and wakes the consumer when
// the queue was empty; the consumer, on the event loop, takes them all in
// arrival order. A slow reader only lets its own queue grow, bounded by its
// max_tokens.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "ladder/engine/request.h"
#include "ladder/server/chat_output.h"

namespace ladder::server {

struct ChoiceOutput {
    int32_t choice = 0;  // index into the API request's choices
    engine::RequestOutput output;
    std::chrono::steady_clock::time_point pushed;  // when the engine handed it over
    // Chat with tools or reasoning: the output's text as message pieces.
    std::optional<MessageDelta> message;
};

class ChoiceOutputs {
public:
    // Engine thread.
    void push(int32_t choice, engine::RequestOutput&& output);
    // wake runs on the pushing thread whenever an output arrives to an empty
    // queue (at once if some are waiting); it must only schedule the
    // consumer. An empty function stops the wakes.
    void on_ready(std::function<void()> wake);
    // Everything that arrived since the last take, oldest first.
    std::vector<ChoiceOutput> take();

private:
    std::mutex mutex_;
    std::vector<ChoiceOutput> outputs_;
    std::function<void()> wake_;
};

}  // namespace ladder::server
