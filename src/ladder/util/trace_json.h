// Turns trace events into Chrome's trace-event JSON, one event a line, and
// keeps the file well formed whatever the recorders did: an async end or a
// flow step whose begin is not in this file (it began before the trace) is
// left out, and at close every span and flow still open is ended, so every
// 'b' has its 'e' and every flow id its 's' and 'f'. Knows no threads.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ladder/util/trace.h"

namespace ladder::util::trace {

class TraceJson {
public:
    // out: an open file, written from its start; origin_ns is time zero.
    TraceJson(std::FILE* out, int64_t origin_ns, int pid);

    void thread_name(int32_t tid, const std::string& name);
    void write(const Event& event);
    // Ends what is open at end_ns and closes the JSON. Returns false if a
    // write to the file failed at any point.
    bool close(int64_t end_ns);

private:
    struct OpenSpan {
        const char* name;
        int32_t tid;
    };
    using AsyncKey = std::pair<std::string, uint64_t>;  // (category, id)

    bool admit(const Event& event);
    void emit(const Event& event);
    void emit_line(const std::string& line);
    double micros(int64_t ns) const;

    std::FILE* out_;
    int64_t origin_ns_;
    int pid_;
    bool first_ = true;
    bool failed_ = false;
    std::map<AsyncKey, std::vector<OpenSpan>> open_spans_;
    std::map<uint64_t, OpenSpan> open_flows_;  // id -> its start's name and thread
};

// The JSON text of s, quotes included.
std::string json_string(const std::string& s);

}  // namespace ladder::util::trace
