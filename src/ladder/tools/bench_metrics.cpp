#include "ladder/tools/bench_metrics.h"

#include <vector>

namespace ladder::tools {

namespace {

double per_second(double amount, double duration_s) {
    return duration_s > 0.0 ? amount / duration_s : 0.0;
}

// The latencies of completed requests, in seconds.
struct Latencies {
    std::vector<double> ttfts;
    std::vector<double> tpots;
    std::vector<double> itls;
    std::vector<double> e2els;
};

}  // namespace

Distribution distribution_ms(std::span<const double> values_s) {
    std::vector<double> ms(values_s.begin(), values_s.end());
    for (double& value : ms) value *= 1000.0;
    return {mean_of(ms), percentile(ms, 50.0), stddev_of(ms), percentile(ms, 90.0),
            percentile(ms, 99.0)};
}

std::optional<double> RequestTotals::add(const RequestResult& result, const LatencySlo& slo) {
    if (!result.success) {
        ++n_failed;
        return std::nullopt;
    }
    ++n_completed;
    total_input_tokens += result.prompt_tokens();
    total_output_tokens += result.output_tokens();
    if (result.usage_cached_tokens) {
        total_cached_tokens += *result.usage_cached_tokens;
        n_cache_prompt_tokens += result.prompt_tokens();
    }
    if (result.usage_mismatch()) ++n_usage_mismatches;
    if (!result.usage_completion_tokens) ++n_without_usage;
    const std::optional<double> tpot =
        time_per_output_token(result.e2e_s, result.ttft_s, result.output_tokens());
    sum_e2e_s += result.e2e_s;
    if (meets_slo(slo, result.ttft_s, tpot)) ++n_good;
    return tpot;
}

void apply_totals(const RequestTotals& totals, double duration_s, const SummaryOptions& options,
                  BenchSummary& summary) {
    summary.duration_s = duration_s;
    summary.n_completed = totals.n_completed;
    summary.n_failed = totals.n_failed;
    summary.total_input_tokens = totals.total_input_tokens;
    summary.total_output_tokens = totals.total_output_tokens;
    summary.total_cached_tokens = totals.total_cached_tokens;
    summary.n_usage_mismatches = totals.n_usage_mismatches;
    summary.n_without_usage = totals.n_without_usage;
    summary.request_throughput = per_second(static_cast<double>(totals.n_completed), duration_s);
    summary.input_throughput =
        per_second(static_cast<double>(totals.total_input_tokens), duration_s);
    summary.output_throughput =
        per_second(static_cast<double>(totals.total_output_tokens), duration_s);
    summary.total_token_throughput = summary.input_throughput + summary.output_throughput;
    summary.mean_concurrency = per_second(totals.sum_e2e_s, duration_s);
    if (options.slo.any()) {
        summary.n_good = totals.n_good;
        summary.request_goodput = goodput(totals.n_good, duration_s);
    }
    if (totals.n_cache_prompt_tokens > 0) {
        summary.cached_token_share = static_cast<double>(totals.total_cached_tokens) /
                                     static_cast<double>(totals.n_cache_prompt_tokens);
    }
    if (options.gpu_hour_cost && summary.output_throughput > 0.0) {
        summary.cost_per_million_output_tokens = cost_per_million_tokens(
            *options.gpu_hour_cost, summary.output_throughput, options.gpus_per_replica);
        summary.cost_per_million_total_tokens = cost_per_million_tokens(
            *options.gpu_hour_cost, summary.total_token_throughput, options.gpus_per_replica);
    }
}

BenchSummary summarize(const BenchRun& run, const SummaryOptions& options) {
    BenchSummary summary;
    summary.max_concurrency = run.max_concurrency;
    summary.request_rate = run.request_rate;
    Latencies latencies;
    RequestTotals totals;
    for (const RequestResult& result : run.results) {
        const std::optional<double> tpot = totals.add(result, options.slo);
        if (!result.success) continue;
        latencies.ttfts.push_back(result.ttft_s);
        if (tpot) latencies.tpots.push_back(*tpot);
        latencies.itls.insert(latencies.itls.end(), result.itls_s.begin(), result.itls_s.end());
        latencies.e2els.push_back(result.e2e_s);
    }
    apply_totals(totals, run.duration_s, options, summary);
    summary.ttft_ms = distribution_ms(latencies.ttfts);
    summary.tpot_ms = distribution_ms(latencies.tpots);
    summary.itl_ms = distribution_ms(latencies.itls);
    summary.e2el_ms = distribution_ms(latencies.e2els);
    return summary;
}

}  // namespace ladder::tools
