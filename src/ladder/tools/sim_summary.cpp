#include "ladder/tools/sim_summary.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ladder/tools/bench_stats.h"

namespace ladder::tools {

namespace {

constexpr double kFirstEdgeS = 1e-9;
constexpr double kLastEdgeS = 1e6;
// Each bucket is this much wider than the one below: the middle of a bucket
// is within half of 0.1% of anything in it.
constexpr double kBucketRatio = 1.001;
const double kLogRatio = std::log(kBucketRatio);

size_t bucket_of(double seconds) {
    if (!(seconds > kFirstEdgeS)) return 0;
    const double position = std::log(seconds / kFirstEdgeS) / kLogRatio;
    return 1 + static_cast<size_t>(position);
}

}  // namespace

void RunRecorder::add(int64_t index, RequestResult&& result) {
    const auto i = static_cast<size_t>(index);
    if (run_.results.size() <= i) run_.results.resize(i + 1);
    run_.results[i] = std::move(result);
}

void SloCounter::add(int64_t, RequestResult&& result) {
    ++n_done_;
    if (!result.success) return;
    const std::optional<double> tpot =
        time_per_output_token(result.e2e_s, result.ttft_s, result.output_tokens());
    const bool ttft = meets_slo({slo_.ttft_ms, std::nullopt}, result.ttft_s, tpot);
    const bool tpot_met = meets_slo({std::nullopt, slo_.tpot_ms}, result.ttft_s, tpot);
    n_ttft_ += ttft ? 1 : 0;
    n_tpot_ += tpot_met ? 1 : 0;
    n_both_ += ttft && tpot_met ? 1 : 0;
}

SloShares SloCounter::shares() const {
    if (n_done_ == 0) return {};
    const auto n = static_cast<double>(n_done_);
    return {static_cast<double>(n_ttft_) / n, static_cast<double>(n_tpot_) / n,
            static_cast<double>(n_both_) / n};
}

LatencyHistogram::LatencyHistogram() : buckets_(bucket_of(kLastEdgeS) + 1, 0) {}

void LatencyHistogram::add(double seconds) {
    ++buckets_[std::min(bucket_of(seconds), buckets_.size() - 1)];
    ++n_;
    const double delta = seconds - mean_;
    mean_ += delta / static_cast<double>(n_);
    m2_ += delta * (seconds - mean_);
}

// numpy's linear percentile on the sorted values, each value its bucket's middle.
double LatencyHistogram::percentile_s(double q) const {
    if (n_ == 0) return 0.0;
    const double position = q / 100.0 * static_cast<double>(n_ - 1);
    const auto below = static_cast<int64_t>(std::floor(position));
    const double fraction = position - static_cast<double>(below);
    auto value_at = [&](int64_t rank) {
        int64_t seen = 0;
        for (size_t b = 0; b < buckets_.size(); ++b) {
            seen += buckets_[b];
            if (seen > rank) {
                if (b == 0) return kFirstEdgeS;
                return kFirstEdgeS * std::exp((static_cast<double>(b) - 0.5) * kLogRatio);
            }
        }
        return kLastEdgeS;
    };
    const double low = value_at(below);
    const double high = fraction > 0.0 ? value_at(std::min(below + 1, n_ - 1)) : low;
    return low + (high - low) * fraction;
}

Distribution LatencyHistogram::distribution_ms() const {
    if (n_ == 0) return {};
    const double stddev = std::sqrt(m2_ / static_cast<double>(n_));
    return {mean_ * 1000.0, percentile_s(50.0) * 1000.0, stddev * 1000.0,
            percentile_s(90.0) * 1000.0, percentile_s(99.0) * 1000.0};
}

void StreamingSummary::add(int64_t, RequestResult&& result) {
    const std::optional<double> tpot = totals_.add(result, options_.slo);
    if (!result.success) {
        if (first_error_.empty()) first_error_ = result.error;
        return;
    }
    ttft_.add(result.ttft_s);
    if (tpot) tpot_.add(*tpot);
    for (const double gap : result.itls_s) itl_.add(gap);
    e2el_.add(result.e2e_s);
}

BenchSummary StreamingSummary::summary(double duration_s, int64_t max_concurrency,
                                       double request_rate) const {
    BenchSummary summary;
    summary.max_concurrency = max_concurrency;
    summary.request_rate = request_rate;
    apply_totals(totals_, duration_s, options_, summary);
    summary.ttft_ms = ttft_.distribution_ms();
    summary.tpot_ms = tpot_.distribution_ms();
    summary.itl_ms = itl_.distribution_ms();
    summary.e2el_ms = e2el_.distribution_ms();
    return summary;
}

}  // namespace ladder::tools
