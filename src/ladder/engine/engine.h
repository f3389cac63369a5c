// The engine on its own thread (DESIGN.md): that thread alone owns the
// scheduler, the KV cache and the model; other threads only submit, abort,
// and read outputs. What the server runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "ladder/engine/engine_core.h"
#include "ladder/engine/request_stream.h"

namespace ladder::engine {

class Engine {
public:
    // Allocates the KV cache and starts the engine thread. The model,
    // tokenizer and pool must outlive the engine; the pool is the engine
    // thread's alone from now on.
    Engine(model::Model& model, const tokenizer::Tokenizer& tokenizer, util::ThreadPool& pool,
           const EngineConfig& config);
    // Aborts whatever is still in flight and joins the thread.
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const KvCachePlan& kv_plan() const { return core_.kv_plan(); }

    // Validates the request (throws util::InputError, nothing queued) and
    // queues it. sink is called on the engine thread for every output.
    RequestId submit(RequestParams params, OutputSink sink);
    // The same, with the outputs queued on a stream for the caller to read.
    std::pair<RequestId, std::shared_ptr<RequestStream>> submit(RequestParams params);
    // Ends the request at the next step; its last output says Abort.
    void abort(RequestId id);

    // A snapshot taken after the last step.
    EngineStats stats() const;
    // Requests submitted and not yet finished.
    int64_t n_in_flight() const { return n_in_flight_.load(); }

private:
    void run();

    EngineCore core_;  // touched by the engine thread only (validate aside)
    std::atomic<uint64_t> next_id_{1};
    std::atomic<int64_t> n_in_flight_{0};

    struct Submission {
        RequestId id;
        RequestParams params;
        OutputSink sink;
    };
    mutable std::mutex inbox_mutex_;
    std::condition_variable wake_;
    std::vector<Submission> submissions_;
    std::vector<RequestId> aborts_;
    bool stopping_ = false;

    mutable std::mutex stats_mutex_;
    EngineStats stats_;

    std::thread thread_;  // last: starts after everything above exists
};

}  // namespace ladder::engine
