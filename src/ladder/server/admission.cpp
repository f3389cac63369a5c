#include "ladder/server/admission.h"

#include <fmt/format.h>

#include <algorithm>

#include "ladder/server/api_error.h"

namespace ladder::server {

Admission::Admission(engine::Engine& engine, std::optional<int64_t> max_queue)
    : engine_(engine), max_queue_(max_queue) {}

int64_t Admission::n_waiting() const {
    // In flight counts requests the engine thread has not picked up yet;
    // running is a snapshot of the last step, so this errs on the low side
    // only while requests finish.
    return std::max<int64_t>(0, engine_.n_in_flight() - engine_.stats().n_running);
}

std::vector<engine::RequestId> Admission::submit(
    std::vector<engine::RequestParams> requests,
    const std::function<engine::OutputSink(size_t)>& sink_for) {
    const std::lock_guard lock(live_->mutex);
    if (live_->closed) {
        throw ApiError(503, "service_unavailable", "the server is shutting down", "",
                       "shutting_down");
    }
    const auto n_new = static_cast<int64_t>(requests.size());
    // Every new request waits until the engine picks it up, so one larger
    // than the queue could never enter: that is the request's fault.
    if (max_queue_ && n_new > *max_queue_) {
        throw ApiError(400, "invalid_request_error",
                       fmt::format("this request needs {} engine requests (prompts x n), more "
                                   "than the server's queue of {} holds",
                                   n_new, *max_queue_),
                       "n");
    }
    if (max_queue_) {
        const int64_t waiting = n_waiting();
        if (waiting + n_new > *max_queue_) {
            throw ApiError(429, "rate_limit_error",
                           fmt::format("the server is busy: {} requests are waiting and the "
                                       "queue holds {}; retry later",
                                       waiting, *max_queue_),
                           "", "queue_full");
        }
    }
    std::vector<engine::RequestId> ids;
    for (size_t i = 0; i < requests.size(); ++i) {
        engine::OutputSink sink = sink_for(i);
        // Leaving the live set takes the lock held here, so it happens after
        // the insert below even when the engine finishes the request at once.
        engine::OutputSink tracked = [live = live_,
                                      sink = std::move(sink)](engine::RequestOutput&& out) {
            if (out.finished()) {
                const std::lock_guard finished_lock(live->mutex);
                live->ids.erase(out.id);
            }
            sink(std::move(out));
        };
        try {
            const engine::RequestId id = engine_.submit(std::move(requests[i]), std::move(tracked));
            live_->ids.insert(id);
            ids.push_back(id);
        } catch (const util::InputError& error) {
            for (engine::RequestId id : ids) engine_.abort(id);
            throw ApiError(400, "invalid_request_error", error.what());
        }
    }
    return ids;
}

void Admission::abort(const std::vector<engine::RequestId>& ids) {
    for (engine::RequestId id : ids) engine_.abort(id);
}

void Admission::abort_all() {
    std::vector<engine::RequestId> ids;
    {
        const std::lock_guard lock(live_->mutex);
        ids.assign(live_->ids.begin(), live_->ids.end());
    }
    abort(ids);
}

void Admission::close() {
    const std::lock_guard lock(live_->mutex);
    live_->closed = true;
}

bool Admission::closed() const {
    const std::lock_guard lock(live_->mutex);
    return live_->closed;
}

int64_t Admission::n_live() const {
    const std::lock_guard lock(live_->mutex);
    return static_cast<int64_t>(live_->ids.size());
}

}  // namespace ladder::server
