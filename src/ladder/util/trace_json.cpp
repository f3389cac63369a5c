#include "ladder/util/trace_json.h"

#include <fmt/format.h>

#include <algorithm>

namespace ladder::util::trace {

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            out += fmt::format("\\u{:04x}", u);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

TraceJson::TraceJson(std::FILE* out, int64_t origin_ns, int pid)
    : out_(out), origin_ns_(origin_ns), pid_(pid) {
    // The object form, so that viewers read displayTimeUnit; events follow
    // one a line, and close() ends the array and the object.
    if (std::fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out_) < 0) failed_ = true;
    emit_line(fmt::format(
        R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"ladder"}}}})", pid_));
}

double TraceJson::micros(int64_t ns) const {
    // An event that began a moment before the trace opened starts at zero.
    return static_cast<double>(std::max<int64_t>(0, ns - origin_ns_)) / 1000.0;
}

void TraceJson::emit_line(const std::string& line) {
    if (!first_ && std::fputs(",\n", out_) < 0) failed_ = true;
    first_ = false;
    if (std::fputs(line.c_str(), out_) < 0) failed_ = true;
}

void TraceJson::thread_name(int32_t tid, const std::string& name) {
    emit_line(
        fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                    pid_, tid, json_string(name)));
}

bool TraceJson::admit(const Event& event) {
    switch (event.phase) {
        case Phase::AsyncBegin:
            open_spans_[{event.category, event.id}].push_back({event.name, event.tid});
            return true;
        case Phase::AsyncEnd: {
            const auto it = open_spans_.find({event.category, event.id});
            if (it == open_spans_.end()) return false;
            std::vector<OpenSpan>& stack = it->second;
            const auto match = std::find_if(stack.rbegin(), stack.rend(), [&](const OpenSpan& s) {
                return std::string_view(s.name) == event.name;
            });
            if (match == stack.rend()) return false;
            // Spans nested inside the one that ends end with it.
            const auto depth = static_cast<size_t>(stack.rend() - match) - 1;
            while (stack.size() > depth + 1) {
                Event inner = event;
                inner.name = stack.back().name;
                inner.n_args = 0;
                stack.pop_back();
                emit(inner);
            }
            stack.pop_back();
            if (stack.empty()) open_spans_.erase(it);
            return true;
        }
        case Phase::AsyncInstant:
            return open_spans_.contains({event.category, event.id});
        case Phase::FlowStart:
            return open_flows_.emplace(event.id, OpenSpan{event.name, event.tid}).second;
        case Phase::FlowStep:
            return open_flows_.contains(event.id);
        case Phase::FlowEnd:
            return open_flows_.erase(event.id) == 1;
        case Phase::Complete:
        case Phase::Counter:
            return true;
    }
    return true;
}

void TraceJson::write(const Event& event) {
    if (admit(event)) emit(event);
}

void TraceJson::emit(const Event& event) {
    std::string line =
        fmt::format(R"({{"ph":"{}","cat":{},"name":{},"pid":{},"tid":{},"ts":{:.3f})",
                    static_cast<char>(event.phase), json_string(event.category),
                    json_string(event.name), pid_, event.tid, micros(event.ts_ns));
    switch (event.phase) {
        case Phase::Complete:
            line += fmt::format(R"(,"dur":{:.3f})",
                                static_cast<double>(std::max<int64_t>(0, event.dur_ns)) / 1000.0);
            break;
        case Phase::AsyncBegin:
        case Phase::AsyncEnd:
        case Phase::AsyncInstant:
            line += fmt::format(R"(,"id":"0x{:x}")", event.id);
            break;
        case Phase::FlowStart:
        case Phase::FlowStep:
        case Phase::FlowEnd:
            // "bp":"e" binds each flow event to the slice that encloses it.
            line += fmt::format(R"(,"id":"0x{:x}","bp":"e")", event.id);
            break;
        case Phase::Counter:
            break;
    }
    if (event.n_args > 0) {
        line += R"(,"args":{)";
        for (int32_t i = 0; i < event.n_args; ++i) {
            const Arg& arg = event.args[static_cast<size_t>(i)];
            if (i > 0) line += ',';
            line += json_string(arg.key) + ':';
            line += arg.text != nullptr ? json_string(arg.text) : fmt::format("{}", arg.value);
        }
        line += '}';
    }
    line += '}';
    emit_line(line);
}

bool TraceJson::close(int64_t end_ns) {
    // Innermost first, so that each end matches the top of its stack.
    for (auto& [key, stack] : open_spans_) {
        while (!stack.empty()) {
            Event end;
            end.phase = Phase::AsyncEnd;
            end.category = key.first.c_str();
            end.name = stack.back().name;
            end.tid = stack.back().tid;
            end.id = key.second;
            end.ts_ns = end_ns;
            end.n_args = 1;
            end.args[0] = {"cut_by_trace_end", 1};
            stack.pop_back();
            emit(end);
        }
    }
    open_spans_.clear();
    for (const auto& [id, start] : open_flows_) {
        Event end;
        end.phase = Phase::FlowEnd;
        end.category = "flow";
        end.name = start.name;
        end.tid = start.tid;
        end.id = id;
        end.ts_ns = end_ns;
        emit(end);
    }
    open_flows_.clear();
    if (std::fputs("\n]}\n", out_) < 0) failed_ = true;
    if (std::fflush(out_) != 0) failed_ = true;
    return !failed_;
}

}  // namespace ladder::util::trace
