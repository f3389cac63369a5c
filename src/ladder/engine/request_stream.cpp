#include "ladder/engine/request_stream.h"

namespace ladder::engine {

void RequestStream::push(RequestOutput&& output) {
    {
        const std::lock_guard lock(mutex_);
        outputs_.push_back(std::move(output));
    }
    ready_.notify_one();
}

std::optional<RequestOutput> RequestStream::next(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !outputs_.empty(); })) return std::nullopt;
    RequestOutput output = std::move(outputs_.front());
    outputs_.pop_front();
    return output;
}

}  // namespace ladder::engine
