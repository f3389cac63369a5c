// The trace writer: the file is valid trace-event JSON with what was
// recorded, every async span and flow it holds is paired (ends and steps of
// ones begun before the trace are left out, open ones are ended at close),
// and threads recording while a trace starts and stops never corrupt it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/trace.h"
#include "ladder/util/trace_json.h"

namespace ladder::util::trace {
namespace {

using json = nlohmann::json;

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            (name + "-" + std::to_string(::getpid()) + ".json"))
        .string();
}

json read_json(const std::string& path) {
    std::ifstream file(path);
    return json::parse(file);  // throws (fails the test) on invalid JSON
}

// Writes events through a TraceJson into a file and reads the JSON back.
json write_through(const std::vector<Event>& events, int64_t close_ns = 10'000) {
    const std::string path = temp_path("trace-json");
    std::FILE* file = std::fopen(path.c_str(), "w");
    EXPECT_NE(file, nullptr);
    {
        TraceJson writer(file, 0, 7);
        writer.thread_name(1, "engine \"main\"");
        for (const Event& event : events) writer.write(event);
        EXPECT_TRUE(writer.close(close_ns));
    }
    std::fclose(file);
    json trace = read_json(path);
    std::filesystem::remove(path);
    return trace;
}

Event async_event(Phase phase, const char* name, uint64_t id, int64_t ts) {
    Event event;
    event.phase = phase;
    event.category = "request";
    event.name = name;
    event.id = id;
    event.ts_ns = ts;
    event.tid = 1;
    return event;
}

Event flow_event(Phase phase, uint64_t id, int64_t ts) {
    Event event = async_event(phase, "request", id, ts);
    event.category = "flow";
    return event;
}

std::vector<std::string> phases_named(const json& trace, const std::string& name) {
    std::vector<std::string> phases;
    for (const json& event : trace["traceEvents"]) {
        if (event["name"] == name) phases.push_back(event["ph"]);
    }
    return phases;
}

TEST(TraceJson, writes_complete_events_with_microsecond_times_and_arguments) {
    Event step;
    step.category = "step";
    step.name = "step";
    step.ts_ns = 1'500;
    step.dur_ns = 2'250;
    step.tid = 1;
    step.n_args = 2;
    step.args[0] = {"tokens", 12};
    step.args[1] = {"reason", 0, "length"};
    const json trace = write_through({step});
    const json& events = trace["traceEvents"];
    ASSERT_EQ(events.size(), 3u);  // process name, thread name, the step
    EXPECT_EQ(events[1]["args"]["name"], "engine \"main\"") << "thread names are escaped";
    const json& x = events[2];
    EXPECT_EQ(x["ph"], "X");
    EXPECT_DOUBLE_EQ(x["ts"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(x["dur"].get<double>(), 2.25);
    EXPECT_EQ(x["pid"], 7);
    EXPECT_EQ(x["args"]["tokens"], 12);
    EXPECT_EQ(x["args"]["reason"], "length");
}

TEST(TraceJson, leaves_out_ends_of_spans_begun_before_the_trace) {
    const json trace =
        write_through({async_event(Phase::AsyncEnd, "queued", 3, 10),
                       async_event(Phase::AsyncInstant, "preempted", 3, 11),
                       flow_event(Phase::FlowStep, 3, 12), flow_event(Phase::FlowEnd, 3, 13)});
    EXPECT_EQ(trace["traceEvents"].size(), 2u) << trace.dump();
}

TEST(TraceJson, ends_spans_and_flows_still_open_at_close) {
    const json trace = write_through(
        {async_event(Phase::AsyncBegin, "request", 5, 10),
         async_event(Phase::AsyncBegin, "decode", 5, 20), flow_event(Phase::FlowStart, 5, 20)},
        /*close_ns=*/9'000);
    EXPECT_EQ(phases_named(trace, "decode"), (std::vector<std::string>{"b", "e"}));
    const std::vector<json> events(trace["traceEvents"].begin(), trace["traceEvents"].end());
    // Innermost first: decode's end comes before the request's.
    std::vector<std::string> ends;
    for (const json& e : events) {
        if (e["ph"] == "e") {
            ends.push_back(e["name"]);
            EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 9.0);
            EXPECT_EQ(e["args"]["cut_by_trace_end"], 1);
        }
    }
    EXPECT_EQ(ends, (std::vector<std::string>{"decode", "request"}));
    EXPECT_EQ(
        std::count_if(events.begin(), events.end(), [](const json& e) { return e["ph"] == "f"; }),
        1);
}

TEST(TraceJson, an_outer_end_ends_the_spans_nested_in_it) {
    const json trace = write_through({async_event(Phase::AsyncBegin, "request", 9, 10),
                                      async_event(Phase::AsyncBegin, "queued", 9, 10),
                                      async_event(Phase::AsyncEnd, "request", 9, 50)});
    std::vector<std::string> sequence;
    for (const json& e : trace["traceEvents"]) {
        if (e["ph"] == "b" || e["ph"] == "e")
            sequence.push_back(e["ph"].get<std::string>() + e["name"].get<std::string>());
    }
    EXPECT_EQ(sequence, (std::vector<std::string>{"brequest", "bqueued", "equeued", "erequest"}));
}

TEST(TraceJson, a_second_flow_start_for_an_open_id_is_left_out) {
    const json trace =
        write_through({flow_event(Phase::FlowStart, 2, 10), flow_event(Phase::FlowStart, 2, 20),
                       flow_event(Phase::FlowEnd, 2, 30)});
    EXPECT_EQ(phases_named(trace, "request"), (std::vector<std::string>{"s", "f"}));
}

TEST(Trace, records_nothing_while_off_and_refuses_a_second_trace) {
    EXPECT_FALSE(enabled());
    complete("step", "before", now_ns(), now_ns());  // no trace open: dropped
    const std::string path = temp_path("trace-recorder");
    start(path);
    EXPECT_TRUE(enabled());
    EXPECT_THROW(start(temp_path("trace-second")), InputError);
    { const Scope scope("step", "inside", {"layer", 3}); }
    EXPECT_EQ(stop(), path);
    EXPECT_FALSE(enabled());
    EXPECT_EQ(stop(), "") << "stopping with no trace open is a no-op";
    const json trace = read_json(path);
    int n_inside = 0;
    for (const json& event : trace["traceEvents"]) {
        EXPECT_NE(event["name"], "before");
        if (event["name"] == "inside") {
            ++n_inside;
            EXPECT_EQ(event["args"]["layer"], 3);
        }
    }
    EXPECT_EQ(n_inside, 1);
    std::filesystem::remove(path);
}

TEST(Trace, an_unwritable_path_is_an_input_error) {
    EXPECT_THROW(start("/nonexistent-dir/trace.json"), InputError);
    EXPECT_FALSE(enabled());
}

TEST(Trace, threads_recording_across_start_and_stop_leave_valid_json) {
    std::atomic<bool> done{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
            set_thread_name("recorder " + std::to_string(t));
            while (!done.load()) {
                const Scope scope("op", "work");
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        });
    }
    ThreadPool pool(3);  // its workers record their tasks too
    for (int round = 0; round < 3; ++round) {
        const std::string path = temp_path("trace-threads-" + std::to_string(round));
        start(path);
        // Tasks long enough that the workers, not only the caller, take some.
        for (int region = 0; region < 40; ++region) {
            pool.parallel_for(
                6, [](int64_t) { std::this_thread::sleep_for(std::chrono::microseconds(300)); });
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(120));  // past a writer flush
        stop();
        const json trace = read_json(path);
        int n_work = 0;
        int n_tasks = 0;
        std::vector<std::string> names;
        for (const json& event : trace["traceEvents"]) {
            if (event["ph"] == "X") {
                EXPECT_GE(event["dur"].get<double>(), 0.0);
                n_work += event["name"] == "work";
                n_tasks += event["name"] == "tasks";
            }
            if (event["ph"] == "M" && event["name"] == "thread_name")
                names.push_back(event["args"]["name"]);
        }
        EXPECT_GT(n_work, 0) << "round " << round;
        EXPECT_GT(n_tasks, 0) << "the pool's workers record the tasks they ran";
        EXPECT_NE(std::find(names.begin(), names.end(), "recorder 0"), names.end());
        EXPECT_NE(std::find(names.begin(), names.end(), "pool worker 2"), names.end());
        std::filesystem::remove(path);
    }
    done.store(true);
    for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace ladder::util::trace
