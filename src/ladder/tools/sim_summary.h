// Where the simulator's finished requests go. A short run is recorded whole
// (a BenchRun: bench's summary, exact, and its per-request JSON arrays); a
// long one (an hour of a fleet is millions of requests and hundreds of
// millions of token gaps) is folded into a summary as it goes, in memory
// that does not grow with the run: counts exact, means and deviations exact,
// percentiles from log-spaced histograms within 0.05% of the exact value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_runner.h"

namespace ladder::tools {

class RequestSink {
public:
    virtual ~RequestSink() = default;
    // Request `index` of the workload is done (finished or refused).
    virtual void add(int64_t index, RequestResult&& result) = 0;
};

// The shares of a run's requests (finished or refused) that met the TTFT
// SLO, the TPOT SLO and both: a refused request meets none, and an SLO not
// given is met by every finished one.
struct SloShares {
    double ttft = 0.0;
    double tpot = 0.0;
    double both = 0.0;
};

// Counts the requests meeting each SLO and keeps nothing else: what
// --find-min-replicas runs each fleet it tries with.
class SloCounter final : public RequestSink {
public:
    explicit SloCounter(const LatencySlo& slo) : slo_(slo) {}
    void add(int64_t index, RequestResult&& result) override;
    SloShares shares() const;

private:
    LatencySlo slo_;
    int64_t n_done_ = 0;
    int64_t n_ttft_ = 0;
    int64_t n_tpot_ = 0;
    int64_t n_both_ = 0;
};

// Keeps every result, in the workload's order.
class RunRecorder final : public RequestSink {
public:
    void add(int64_t index, RequestResult&& result) override;
    BenchRun& run() { return run_; }

private:
    BenchRun run_;
};

// Latencies in buckets 0.1% wide from 1 ns to 10^6 s (a value is reported as
// its bucket's geometric middle), with the exact count, mean and population
// deviation (Welford's update).
class LatencyHistogram {
public:
    LatencyHistogram();
    void add(double seconds);
    // As distribution_ms, with percentiles read from the buckets.
    Distribution distribution_ms() const;
    int64_t count() const { return n_; }

private:
    double percentile_s(double q) const;

    std::vector<int64_t> buckets_;  // [0]: at most the first edge
    int64_t n_ = 0;
    double mean_ = 0.0;
    double m2_ = 0.0;
};

// Folds each result into the summary's totals and histograms, keeping none.
class StreamingSummary final : public RequestSink {
public:
    explicit StreamingSummary(const SummaryOptions& options) : options_(options) {}
    void add(int64_t index, RequestResult&& result) override;
    BenchSummary summary(double duration_s, int64_t max_concurrency, double request_rate) const;
    int64_t n_done() const { return totals_.n_completed + totals_.n_failed; }
    // The first failed request's error (empty: none failed).
    const std::string& first_error() const { return first_error_; }

private:
    SummaryOptions options_;
    RequestTotals totals_;
    LatencyHistogram ttft_, tpot_, itl_, e2el_;
    std::string first_error_;
};

}  // namespace ladder::tools
