// Chrome trace-event recording, which Perfetto UI and chrome://tracing open.
// Off, every call site costs one relaxed load and a branch that predicts
// "off"; on, an event is a fixed-size record appended to its thread's buffer,
// and a writer thread turns the buffers into JSON off the hot path.
//
// Tracing is process-wide, like a log: the kernel pool, the forward pass and
// the engine record into the one trace that is open, and none of them is
// handed a tracer. Event names and argument keys are string literals: they
// are kept as pointers until the writer formats them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace ladder::util::trace {

namespace detail {
inline std::atomic<bool> g_enabled{false};
}

// Whether a trace is being recorded. The branch every call site takes first.
inline bool enabled() { return detail::g_enabled.load(std::memory_order_relaxed); }

// Nanoseconds on the steady clock (the trace's time base).
int64_t now_ns();

// One argument of an event: an integer, or a string literal when text is set.
struct Arg {
    const char* key = nullptr;
    int64_t value = 0;
    const char* text = nullptr;
};

enum class Phase : char {
    Complete = 'X',    // a slice on its thread's track: ts and dur
    AsyncBegin = 'b',  // nestable async span, matched by (category, id)
    AsyncEnd = 'e',
    AsyncInstant = 'n',
    FlowStart = 's',  // flow arrows between slices, matched by id
    FlowStep = 't',
    FlowEnd = 'f',
    Counter = 'C',  // each argument is one counter track
};

// Arguments past this many are dropped: raise it with the call that needs more.
constexpr int kMaxArgs = 7;

struct Event {
    Phase phase = Phase::Complete;
    const char* category = "";
    const char* name = "";
    int64_t ts_ns = 0;
    int64_t dur_ns = 0;  // Complete only
    uint64_t id = 0;     // async and flow events
    int32_t tid = 0;     // set by record(): the recording thread's track
    int32_t n_args = 0;
    std::array<Arg, kMaxArgs> args{};
};

// Appends to this thread's buffer (dropped when no trace is open).
void record(Event event);

// Names this thread's track ("engine", "pool worker 1").
void set_thread_name(const std::string& name);

// Convenience forms of record(); each checks enabled() first.
void complete(const char* category, const char* name, int64_t start_ns, int64_t end_ns,
              std::initializer_list<Arg> args = {});
void async(Phase phase, const char* category, const char* name, uint64_t id, int64_t ts_ns,
           std::initializer_list<Arg> args = {});
void flow(Phase phase, const char* name, uint64_t id, int64_t ts_ns);
void counter(const char* name, int64_t ts_ns, std::initializer_list<Arg> args);

// A Complete slice over its lifetime, recorded only if tracing was on when it
// began (and still is when it ends).
class Scope {
public:
    Scope(const char* category, const char* name, Arg arg = {})
        : category_(category), name_(name), arg_(arg) {
        if (enabled()) [[unlikely]]
            start_ns_ = now_ns();
    }
    ~Scope() {
        if (start_ns_ != 0) [[unlikely]]
            end();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

private:
    void end();

    const char* category_;
    const char* name_;
    Arg arg_;
    int64_t start_ns_ = 0;
};

// One trace file at a time, for the whole process. start() opens the file
// and begins recording (an InputError if it cannot be opened or a trace is
// open already); stop() records nothing more, writes what is buffered, closes
// the JSON and returns the file's path ("" when none was open).
void start(const std::string& path);
std::string stop();
bool active();
// Bumped by every start(): a request that began in an earlier trace opens
// its spans again in this one.
uint32_t session();

// Stops the trace (if one is open) when it goes out of scope, so that the
// file is closed on every way out of a command, exceptions included.
class TraceFile {
public:
    explicit TraceFile(const std::string& path);  // "" records nothing
    ~TraceFile();
    TraceFile(const TraceFile&) = delete;
    TraceFile& operator=(const TraceFile&) = delete;

private:
    bool started_;
};

}  // namespace ladder::util::trace
