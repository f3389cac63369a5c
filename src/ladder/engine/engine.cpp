#include "ladder/engine/engine.h"

#include "ladder/util/trace.h"

namespace ladder::engine {

Engine::Engine(model::Model& model, const tokenizer::Tokenizer& tokenizer, util::ThreadPool& pool,
               const EngineConfig& config)
    : core_(model, tokenizer, pool, config), stats_(core_.stats()), thread_([this] { run(); }) {}

Engine::~Engine() {
    {
        const std::lock_guard lock(inbox_mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

RequestId Engine::submit(RequestParams params, OutputSink sink) {
    core_.validate(params);
    const RequestId id{next_id_.fetch_add(1)};
    ++n_in_flight_;
    // The sink is wrapped so that the count of requests in flight drops with
    // the last output (before it is handed on, so its reader sees the count).
    OutputSink counted = [this, sink = std::move(sink)](RequestOutput&& output) {
        if (output.finished()) --n_in_flight_;
        sink(std::move(output));
    };
    {
        const std::lock_guard lock(inbox_mutex_);
        submissions_.push_back({id, std::move(params), std::move(counted)});
    }
    wake_.notify_one();
    return id;
}

std::pair<RequestId, std::shared_ptr<RequestStream>> Engine::submit(RequestParams params) {
    auto stream = std::make_shared<RequestStream>();
    const RequestId id = submit(
        std::move(params), [stream](RequestOutput&& output) { stream->push(std::move(output)); });
    return {id, stream};
}

void Engine::abort(RequestId id) {
    {
        const std::lock_guard lock(inbox_mutex_);
        aborts_.push_back(id);
    }
    wake_.notify_one();
}

EngineStats Engine::stats() const {
    EngineStats stats;
    {
        const std::lock_guard lock(stats_mutex_);
        stats = stats_;
    }
    // The remote tier's threads count writes while the engine idles: read
    // them now rather than as of the last step.
    if (const RemoteKvCache* remote = core_.remote_cache()) stats.remote = remote->stats();
    return stats;
}

void Engine::run() {
    util::trace::set_thread_name("engine");
    std::vector<Submission> submissions;
    std::vector<RequestId> aborts;
    while (true) {
        {
            std::unique_lock lock(inbox_mutex_);
            wake_.wait(lock, [&] {
                return stopping_ || !submissions_.empty() || !aborts_.empty() || core_.has_work();
            });
            if (stopping_) break;
            std::swap(submissions, submissions_);
            std::swap(aborts, aborts_);
        }
        // Submissions first, so that an abort right after a submit finds it.
        for (Submission& s : submissions)
            core_.add_request(s.id, std::move(s.params), std::move(s.sink));
        for (RequestId id : aborts) core_.abort(id);
        submissions.clear();
        aborts.clear();
        core_.step();
        const std::lock_guard lock(stats_mutex_);
        stats_ = core_.stats();
    }
    // Whatever is left gets its final output, so no reader waits forever.
    {
        const std::lock_guard lock(inbox_mutex_);
        for (Submission& s : submissions_)
            core_.add_request(s.id, std::move(s.params), std::move(s.sink));
        submissions_.clear();
    }
    core_.abort_all();
}

}  // namespace ladder::engine
