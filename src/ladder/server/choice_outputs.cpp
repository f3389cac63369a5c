#include "ladder/server/choice_outputs.h"

namespace ladder::server {

void ChoiceOutputs::push(int32_t choice, engine::RequestOutput&& output) {
    {
        const std::lock_guard lock(mutex_);
        outputs_.push_back({choice, std::move(output), std::nullopt});
    }
    ready_.notify_one();
}

std::vector<ChoiceOutput> ChoiceOutputs::take(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, timeout, [&] { return !outputs_.empty(); });
    std::vector<ChoiceOutput> taken;
    taken.swap(outputs_);
    return taken;
}

}  // namespace ladder::server
