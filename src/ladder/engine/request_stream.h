// A request's outputs handed from the engine thread to whoever waits for them
// (a server connection): a small thread-safe queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "ladder/engine/request.h"

namespace ladder::engine {

class RequestStream {
public:
    // Engine thread.
    void push(RequestOutput&& output);
    // Waits up to timeout for the next output; nullopt when none came. After
    // the output that carries the finish reason, nothing more comes.
    std::optional<RequestOutput> next(std::chrono::milliseconds timeout);

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<RequestOutput> outputs_;
};

}  // namespace ladder::engine
