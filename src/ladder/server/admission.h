// The door between HTTP and the engine: an API request's engine requests go
// in together or not at all (429 when the waiting queue would pass
// --max-queue, 503 while draining, 400 when the engine refuses one), and the
// requests in flight are known so that a drain can wait for them or abort
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "ladder/engine/engine.h"

namespace ladder::server {

class Admission {
public:
    Admission(engine::Engine& engine, std::optional<int64_t> max_queue);

    // Submits one engine request per element; sink_for(i) receives the
    // outputs of requests[i]. Throws ApiError; when it throws, nothing it
    // submitted is left running.
    std::vector<engine::RequestId> submit(
        std::vector<engine::RequestParams> requests,
        const std::function<engine::OutputSink(size_t)>& sink_for);

    // Ends the requests at the next engine step (finished ones are ignored).
    void abort(const std::vector<engine::RequestId>& ids);
    void abort_all();

    // From now on every submit is refused with 503.
    void close();
    bool closed() const;
    // Engine requests submitted here and not yet finished.
    int64_t n_live() const;
    // Requests submitted and not yet running, as far as the last step knows.
    int64_t n_waiting() const;

private:
    // Shared with the sinks of the requests in flight, which may run on the
    // engine thread until the engine is gone, whatever is destroyed first.
    struct Live {
        // Held while submitting, so that the queue check and the submissions
        // are one step, and so that a request cannot finish (and leave ids)
        // before it was added to ids.
        std::mutex mutex;
        std::set<engine::RequestId> ids;
        bool closed = false;
    };

    engine::Engine& engine_;
    const std::optional<int64_t> max_queue_;
    std::shared_ptr<Live> live_ = std::make_shared<Live>();
};

}  // namespace ladder::server
