// The requests `ladder simulate` replays, drawn one at a time in arrival
// order so that an hour of a busy fleet (millions of requests) is never held
// in memory: bench's synthetic prompts drawn as they are needed, bench's file
// prompts, or a trace of arrival times, lengths and prefix ids.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/sim_replica.h"

namespace ladder::tools {

class RequestStream {
public:
    virtual ~RequestStream() = default;
    // The next request in arrival order into `request`; false at the end.
    virtual bool next(SimRequest& request) = 0;
};

// Requests given up front (the hand-checked tests).
class FixedRequests final : public RequestStream {
public:
    explicit FixedRequests(std::span<const SimRequest> requests) : requests_(requests) {}
    bool next(SimRequest& request) override;

private:
    std::span<const SimRequest> requests_;
    size_t next_ = 0;
};

// The prompt of a BenchPrompt as token ids: a payload of ids as it is; text
// (or chat messages) as ids drawn from a hash of each text, about one per
// token as bench estimates, so equal texts give equal ids and share cached blocks.
std::vector<int32_t> simulated_prompt(const BenchPrompt& prompt);

// bench's prompts, arriving as `ladder bench` would send them.
class PromptRequests final : public RequestStream {
public:
    PromptRequests(std::vector<BenchPrompt> prompts, const ArrivalOptions& arrivals, uint64_t seed);
    bool next(SimRequest& request) override;

private:
    std::vector<BenchPrompt> prompts_;
    ArrivalProcess arrivals_;
    size_t next_ = 0;
};

// bench's random and prefix datasets, the same prompts for a seed, drawn
// as the simulation reaches them.
class SyntheticRequests final : public RequestStream {
public:
    SyntheticRequests(const DatasetOptions& dataset, const ArrivalOptions& arrivals);
    bool next(SimRequest& request) override;

private:
    SyntheticPrompts prompts_;
    SyntheticPrompt drawn_;  // the last draw, whose buffer the next reuses
    ArrivalProcess arrivals_;
    int64_t n_total_;
    int64_t next_ = 0;
    int32_t chat_offset_;  // chat's word indices as ids clear of the low ones
};

// A trace: JSONL, one request a line, in arrival order:
//   {"arrival_s": 0.25, "input_len": 812, "output_len": 120,
//    "prefix_id": "bot-3", "prefix_len": 512}
// prefix_id (a string or an integer) and prefix_len are optional: requests of
// one prefix_id begin with the same prefix_len tokens (shorter ones with the
// start of the longer). Throws util::InputError naming the file and line.
class TraceRequests final : public RequestStream {
public:
    // max_requests: stop after that many lines (none: the whole trace).
    TraceRequests(const std::string& path, std::optional<int64_t> max_requests, uint64_t seed);
    bool next(SimRequest& request) override;

private:
    std::string path_;
    std::ifstream file_;
    std::optional<int64_t> max_requests_;
    uint64_t seed_;
    int64_t line_ = 0;
    int64_t n_read_ = 0;
    double last_arrival_s_ = 0.0;
};

// One trace line (no newline) of a request: what `ladder simulate convert` writes.
struct TraceRecord {
    double arrival_s = 0.0;
    int64_t input_len = 0;
    int64_t output_len = 0;
    std::optional<std::string> prefix_id;
    int64_t prefix_len = 0;
};
std::string trace_line(const TraceRecord& record);
// Parses and checks one line; throws util::InputError naming `where`.
TraceRecord parse_trace_line(const std::string& line, const std::string& where);

}  // namespace ladder::tools
