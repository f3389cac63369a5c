#include "ladder/tools/trace_summary.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using json = nlohmann::json;

const json& events_of(const json& trace) {
    // Both forms of the format: {"traceEvents": [...]} and a bare array.
    if (trace.is_array()) return trace;
    if (trace.is_object() && trace.contains("traceEvents") && trace["traceEvents"].is_array())
        return trace["traceEvents"];
    util::fail("not a trace-event file: no traceEvents array");
}

std::string string_field(const json& event, const char* key) {
    const auto it = event.find(key);
    return it != event.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_field(const json& event, const char* key) {
    const auto it = event.find(key);
    return it != event.end() && it->is_number() ? it->get<double>() : 0.0;
}

// The operation groups of a layer, in the order the forward pass runs them;
// names that were not seen are left out.
std::vector<std::string> ordered_layer_operations(const std::set<std::string>& seen) {
    static const std::vector<std::string> kOrder = {"norm", "qkv", "attention", "out_proj", "mlp"};
    std::vector<std::string> names;
    for (const std::string& name : kOrder) {
        if (seen.contains(name)) names.push_back(name);
    }
    for (const std::string& name : seen) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
}

}  // namespace

TraceSummary summarize_trace(const json& trace) {
    TraceSummary summary;
    std::map<std::pair<std::string, std::string>, OperationTime> operations;
    std::map<int64_t, std::map<std::string, double>> layer_ops;
    std::map<int64_t, double> layer_total;
    std::set<std::string> layer_op_names;
    std::map<int64_t, ThreadTime> threads;
    std::set<std::string> requests;
    double first_start = -1.0;
    double last_end = 0.0;

    for (const json& event : events_of(trace)) {
        if (!event.is_object()) continue;
        const std::string phase = string_field(event, "ph");
        const auto tid = static_cast<int64_t>(number_field(event, "tid"));
        if (phase == "M" && string_field(event, "name") == "thread_name") {
            threads[tid].tid = tid;
            if (event.contains("args") && event["args"].contains("name"))
                threads[tid].name = string_field(event["args"], "name");
            continue;
        }
        if (phase == "b" && string_field(event, "cat") == "request" &&
            string_field(event, "name") == "request") {
            requests.insert(string_field(event, "id"));
            continue;
        }
        if (phase != "X") continue;
        const std::string name = string_field(event, "name");
        const std::string category = string_field(event, "cat");
        const double ts = number_field(event, "ts");
        const double dur = number_field(event, "dur");
        ThreadTime& thread = threads[tid];
        thread.tid = tid;
        if (category == "step" && name == "step") {
            ++summary.n_steps;
            summary.step_us += dur;
            TracedStep step;
            step.dur_us = dur;
            if (event.contains("args")) {
                const json& args = event["args"];
                StepWork& work = step.work;
                work.n_tokens = static_cast<int64_t>(number_field(args, "tokens"));
                work.n_logit_rows = static_cast<int64_t>(number_field(args, "logit_rows"));
                work.n_context = number_field(args, "context");
                // Older traces: one context price and no KV reads are fitted.
                if (args.contains("decode_context"))
                    work.n_decode_context = number_field(args, "decode_context");
                if (args.contains("kv_read")) work.n_kv_read = number_field(args, "kv_read");
                step.has_shape = args.contains("logit_rows") && args.contains("context");
                summary.n_step_tokens += work.n_tokens;
            }
            summary.steps.push_back(step);
            first_start = first_start < 0.0 ? ts : std::min(first_start, ts);
            last_end = std::max(last_end, ts + dur);
            thread.busy_us += dur;
            ++thread.n_slices;
            continue;
        }
        if (category == "pool") {
            if (name == "sleep") {
                thread.sleep_us += dur;
            } else {
                thread.busy_us += dur;
                ++thread.n_slices;
            }
            continue;
        }
        if (category != "step" && category != "op" && category != "layer") continue;
        OperationTime& op = operations[{category, name}];
        op.name = name;
        op.category = category;
        ++op.n_calls;
        op.total_us += dur;
        const bool has_layer = event.contains("args") && event["args"].contains("layer");
        if (!has_layer) continue;
        const auto layer = static_cast<int64_t>(number_field(event["args"], "layer"));
        if (category == "layer") {
            layer_total[layer] += dur;
        } else {
            layer_ops[layer][name] += dur;
            layer_op_names.insert(name);
        }
    }
    if (summary.n_steps == 0) util::fail("the trace holds no engine step");

    summary.span_us = last_end - first_start;
    summary.n_requests = static_cast<int64_t>(requests.size());
    for (auto& [key, op] : operations) summary.operations.push_back(op);
    std::sort(
        summary.operations.begin(), summary.operations.end(),
        [](const OperationTime& a, const OperationTime& b) { return a.total_us > b.total_us; });
    summary.layer_operations = ordered_layer_operations(layer_op_names);
    for (const auto& [layer, total] : layer_total) {
        LayerTime row{layer, total, {}};
        for (const std::string& name : summary.layer_operations) {
            const auto& ops = layer_ops[layer];
            const auto it = ops.find(name);
            row.operation_us.push_back(it == ops.end() ? 0.0 : it->second);
        }
        summary.layers.push_back(std::move(row));
    }
    for (auto& [tid, thread] : threads) {
        if (thread.n_slices == 0 && thread.sleep_us == 0.0) continue;  // recorded nothing
        if (thread.name.empty()) thread.name = "thread " + std::to_string(tid);
        summary.threads.push_back(thread);
    }
    return summary;
}

TraceSummary read_trace_summary(const std::string& path) {
    std::ifstream file(path);
    if (!file) util::fail("cannot open trace '{}'", path);
    json trace;
    try {
        trace = json::parse(file);
    } catch (const json::exception& error) {
        util::fail("'{}' is not valid JSON: {}", path, error.what());
    }
    return summarize_trace(trace);
}

}  // namespace ladder::tools
