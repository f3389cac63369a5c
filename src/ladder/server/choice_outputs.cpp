#include "ladder/server/choice_outputs.h"

namespace ladder::server {

void ChoiceOutputs::push(int32_t choice, engine::RequestOutput&& output) {
    std::function<void()> wake;
    {
        const std::lock_guard lock(mutex_);
        // Only the first output of a batch wakes the consumer: it takes them
        // all, so a stream costs one wake per engine step, not per output.
        if (outputs_.empty()) wake = wake_;
        outputs_.push_back({choice, std::move(output), std::chrono::steady_clock::now(),
                            std::nullopt});
    }
    if (wake) wake();
}

void ChoiceOutputs::on_ready(std::function<void()> wake) {
    bool waiting = false;
    {
        const std::lock_guard lock(mutex_);
        wake_ = wake;
        waiting = !outputs_.empty();
    }
    if (wake && waiting) wake();
}

std::vector<ChoiceOutput> ChoiceOutputs::take() {
    std::vector<ChoiceOutput> taken;
    const std::lock_guard lock(mutex_);
    taken.swap(outputs_);
    return taken;
}

}  // namespace ladder::server
