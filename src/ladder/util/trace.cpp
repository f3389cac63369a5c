// The recorders' side (one buffer per thread) and the writer thread that
// empties the buffers into the file every tenth of a second, so that a
// trace is on disk as it goes and a recording thread never formats or writes.
#include "ladder/util/trace.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "ladder/util/error.h"
#include "ladder/util/quiet_thread.h"
#include "ladder/util/trace_json.h"

namespace ladder::util::trace {

namespace {

constexpr auto kWriteInterval = std::chrono::milliseconds(100);
constexpr size_t kInitialEvents = 4096;

struct ThreadBuffer {
    std::mutex mutex;  // taken by its thread per event and by the writer per drain
    std::vector<Event> events;
    std::string name;
    bool name_changed = true;
    int32_t tid = 0;
    // The writer's alone: swapped with events, so both keep their capacity.
    std::vector<Event> spare;
    uint32_t named_in_session = 0;
};

class Recorder {
public:
    ThreadBuffer& this_thread();
    void start(const std::string& path);
    std::string stop();
    bool active() {
        const std::lock_guard lock(control_mutex_);
        return file_ != nullptr;
    }
    uint32_t session() const { return session_.load(std::memory_order_relaxed); }

private:
    void writer_loop();
    void drain();
    std::vector<std::shared_ptr<ThreadBuffer>> buffers();

    std::mutex registry_mutex_;
    std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
    int32_t next_tid_ = 1;

    std::mutex control_mutex_;  // start and stop, one at a time
    std::FILE* file_ = nullptr;
    std::string path_;
    std::unique_ptr<TraceJson> json_;
    std::thread writer_;
    std::mutex writer_mutex_;
    std::condition_variable writer_wake_;
    bool writer_stopping_ = false;
    std::atomic<uint32_t> session_{0};
};

// Never destroyed: threads may record while static destructors run at exit.
Recorder& recorder() {
    static Recorder* const instance = new Recorder();
    return *instance;
}

ThreadBuffer& Recorder::this_thread() {
    thread_local std::shared_ptr<ThreadBuffer> buffer;
    if (!buffer) {
        buffer = std::make_shared<ThreadBuffer>();
        buffer->events.reserve(kInitialEvents);
        const std::lock_guard lock(registry_mutex_);
        buffer->tid = next_tid_++;
        buffer->name = "thread " + std::to_string(buffer->tid);
        buffers_.push_back(buffer);
    }
    return *buffer;
}

std::vector<std::shared_ptr<ThreadBuffer>> Recorder::buffers() {
    const std::lock_guard lock(registry_mutex_);
    // A buffer only the registry still holds belongs to a thread that ended;
    // it goes once the writer has emptied it.
    std::erase_if(buffers_, [](const std::shared_ptr<ThreadBuffer>& b) {
        if (b.use_count() > 1) return false;
        const std::lock_guard buffer_lock(b->mutex);
        return b->events.empty();
    });
    return buffers_;
}

void Recorder::start(const std::string& path) {
    const std::lock_guard lock(control_mutex_);
    if (file_ != nullptr) fail("a trace is being written already (to '{}')", path_);
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) fail("cannot open trace file '{}': {}", path, std::strerror(errno));
    // What earlier traces left behind (events recorded as one stopped) is not this one's.
    for (const std::shared_ptr<ThreadBuffer>& buffer : buffers()) {
        const std::lock_guard buffer_lock(buffer->mutex);
        buffer->events.clear();
    }
    file_ = file;
    path_ = path;
    json_ = std::make_unique<TraceJson>(file, now_ns(), static_cast<int>(::getpid()));
    session_.fetch_add(1, std::memory_order_relaxed);
    writer_stopping_ = false;
    writer_ = start_quiet_thread([this] { writer_loop(); });
    detail::g_enabled.store(true, std::memory_order_release);
}

std::string Recorder::stop() {
    const std::lock_guard lock(control_mutex_);
    if (file_ == nullptr) return "";
    detail::g_enabled.store(false, std::memory_order_release);
    {
        const std::lock_guard writer_lock(writer_mutex_);
        writer_stopping_ = true;
    }
    writer_wake_.notify_one();
    writer_.join();
    drain();
    const bool written = json_->close(now_ns());
    json_.reset();
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!written || !closed) {
        std::fprintf(stderr, "ladder: writing trace file '%s' failed: it is incomplete\n",
                     path_.c_str());
    }
    return std::exchange(path_, std::string());
}

void Recorder::writer_loop() {
    std::unique_lock lock(writer_mutex_);
    while (!writer_stopping_) {
        writer_wake_.wait_for(lock, kWriteInterval, [this] { return writer_stopping_; });
        lock.unlock();
        drain();
        std::fflush(file_);
        lock.lock();
    }
}

void Recorder::drain() {
    const uint32_t session = session_.load(std::memory_order_relaxed);
    for (const std::shared_ptr<ThreadBuffer>& buffer : buffers()) {
        std::string name;
        bool name_due = false;
        {
            const std::lock_guard lock(buffer->mutex);
            buffer->events.swap(buffer->spare);
            name_due = buffer->name_changed || buffer->named_in_session != session;
            if (name_due) name = buffer->name;
            buffer->name_changed = false;
        }
        if (name_due) {
            json_->thread_name(buffer->tid, name);
            buffer->named_in_session = session;
        }
        for (const Event& event : buffer->spare) json_->write(event);
        buffer->spare.clear();
    }
}

}  // namespace

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void record(Event event) {
    if (!enabled()) return;
    ThreadBuffer& buffer = recorder().this_thread();
    event.tid = buffer.tid;
    const std::lock_guard lock(buffer.mutex);
    buffer.events.push_back(event);
}

void set_thread_name(const std::string& name) {
    ThreadBuffer& buffer = recorder().this_thread();
    const std::lock_guard lock(buffer.mutex);
    buffer.name = name;
    buffer.name_changed = true;
}

namespace {

Event make_event(Phase phase, const char* category, const char* name, int64_t ts_ns, uint64_t id,
                 std::initializer_list<Arg> args) {
    Event event;
    event.phase = phase;
    event.category = category;
    event.name = name;
    event.ts_ns = ts_ns;
    event.id = id;
    for (const Arg& arg : args) {
        if (event.n_args == kMaxArgs) break;
        event.args[static_cast<size_t>(event.n_args++)] = arg;
    }
    return event;
}

}  // namespace

void complete(const char* category, const char* name, int64_t start_ns, int64_t end_ns,
              std::initializer_list<Arg> args) {
    if (!enabled()) return;
    Event event = make_event(Phase::Complete, category, name, start_ns, 0, args);
    event.dur_ns = end_ns - start_ns;
    record(event);
}

void async(Phase phase, const char* category, const char* name, uint64_t id, int64_t ts_ns,
           std::initializer_list<Arg> args) {
    if (enabled()) record(make_event(phase, category, name, ts_ns, id, args));
}

void flow(Phase phase, const char* name, uint64_t id, int64_t ts_ns) {
    if (enabled()) record(make_event(phase, "flow", name, ts_ns, id, {}));
}

void counter(const char* name, int64_t ts_ns, std::initializer_list<Arg> args) {
    if (enabled()) record(make_event(Phase::Counter, "counter", name, ts_ns, 0, args));
}

void Scope::end() {
    if (!enabled()) return;
    if (arg_.key != nullptr) {
        complete(category_, name_, start_ns_, now_ns(), {arg_});
    } else {
        complete(category_, name_, start_ns_, now_ns());
    }
}

void start(const std::string& path) { recorder().start(path); }
std::string stop() { return recorder().stop(); }
bool active() { return recorder().active(); }
uint32_t session() { return recorder().session(); }

TraceFile::TraceFile(const std::string& path) : started_(!path.empty()) {
    if (started_) start(path);
}

TraceFile::~TraceFile() {
    if (started_) stop();
}

}  // namespace ladder::util::trace
