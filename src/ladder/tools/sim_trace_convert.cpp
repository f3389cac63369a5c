#include "ladder/tools/sim_trace_convert.h"

#include <algorithm>
#include <fstream>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

const json& array_of(const json& result, const std::string& name, const char* key) {
    const auto found = result.find(key);
    if (found == result.end() || !found->is_array()) {
        util::fail("{}: no \"{}\" array (written by ladder bench --json)", name, key);
    }
    return *found;
}

int64_t length_at(const json& values, size_t i, const std::string& name, const char* key) {
    const json& value = values[i];
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        util::fail("{}: \"{}\"[{}] is not a token count", name, key, i);
    }
    return value.get<int64_t>();
}

}  // namespace

std::vector<TraceRecord> trace_from_bench_json(const json& result, const std::string& name,
                                               const ArrivalOptions& arrivals, uint64_t seed) {
    if (!result.is_object()) util::fail("{}: not a ladder bench --json result", name);
    const json& input_lens = array_of(result, name, "input_lens");
    const json& output_lens = array_of(result, name, "output_lens");
    if (output_lens.size() != input_lens.size()) {
        util::fail("{}: \"input_lens\" and \"output_lens\" differ in length", name);
    }
    const auto starts = result.find("start_times");
    const bool timed = starts != result.end() && starts->is_array();
    if (timed && starts->size() != input_lens.size()) {
        util::fail("{}: \"start_times\" and \"input_lens\" differ in length", name);
    }
    const auto errors = result.find("errors");
    const std::vector<double> drawn =
        timed ? std::vector<double>{}
              : arrival_times(static_cast<int64_t>(input_lens.size()), arrivals, seed);
    std::vector<TraceRecord> records;
    for (size_t i = 0; i < input_lens.size(); ++i) {
        const bool failed = errors != result.end() && errors->is_array() && i < errors->size() &&
                            (*errors)[i].is_string() && !(*errors)[i].get<std::string>().empty();
        TraceRecord record;
        record.input_len = length_at(input_lens, i, name, "input_lens");
        record.output_len = length_at(output_lens, i, name, "output_lens");
        if (failed || record.output_len < 1 || record.input_len < 1) continue;
        if (timed) {
            if (!(*starts)[i].is_number())
                util::fail("{}: \"start_times\"[{}] is not a number", name, i);
            record.arrival_s = (*starts)[i].get<double>();
        } else {
            record.arrival_s = drawn[i];
        }
        records.push_back(record);
    }
    // Bench's arrays are in the prompts' order; a trace is in arrival order, from 0.
    std::stable_sort(
        records.begin(), records.end(),
        [](const TraceRecord& a, const TraceRecord& b) { return a.arrival_s < b.arrival_s; });
    const double first = records.empty() ? 0.0 : records.front().arrival_s;
    for (TraceRecord& record : records) record.arrival_s = std::max(0.0, record.arrival_s - first);
    return records;
}

std::vector<TraceRecord> trace_from_prompts(const std::vector<BenchPrompt>& prompts,
                                            const ArrivalOptions& arrivals, uint64_t seed) {
    const std::vector<double> times =
        arrival_times(static_cast<int64_t>(prompts.size()), arrivals, seed);
    std::vector<TraceRecord> records;
    for (size_t i = 0; i < prompts.size(); ++i) {
        TraceRecord record;
        record.arrival_s = times[i];
        record.input_len = std::max<int64_t>(1, prompts[i].prompt_len);
        record.output_len = std::max<int64_t>(1, prompts[i].max_tokens);
        records.push_back(record);
    }
    return records;
}

void write_trace(const std::string& path, const std::vector<TraceRecord>& records) {
    std::ofstream file(path);
    if (!file) util::fail("cannot write the trace {}", path);
    for (const TraceRecord& record : records) file << trace_line(record) << '\n';
    file.flush();
    if (!file) util::fail("cannot write the trace {}", path);
}

}  // namespace ladder::tools
