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

void count_tokens(const RequestResult& result, BenchSummary& summary, int64_t& n_cache_prompt) {
    summary.total_input_tokens += result.prompt_tokens();
    summary.total_output_tokens += result.output_tokens();
    if (result.usage_cached_tokens) {
        summary.total_cached_tokens += *result.usage_cached_tokens;
        n_cache_prompt += result.prompt_tokens();
    }
    if (result.usage_mismatch()) ++summary.n_usage_mismatches;
    if (!result.usage_completion_tokens) ++summary.n_without_usage;
}

}  // namespace

Distribution distribution_ms(std::span<const double> values_s) {
    std::vector<double> ms(values_s.begin(), values_s.end());
    for (double& value : ms) value *= 1000.0;
    return {mean_of(ms), percentile(ms, 50.0), stddev_of(ms), percentile(ms, 90.0),
            percentile(ms, 99.0)};
}

BenchSummary summarize(const BenchRun& run, const SummaryOptions& options) {
    BenchSummary summary;
    summary.duration_s = run.duration_s;
    summary.max_concurrency = run.max_concurrency;
    summary.request_rate = run.request_rate;
    Latencies latencies;
    int64_t n_cache_prompt = 0;  // prompt tokens of requests that reported cached tokens
    int64_t n_good = 0;
    double sum_e2e = 0.0;
    for (const RequestResult& result : run.results) {
        if (!result.success) {
            ++summary.n_failed;
            continue;
        }
        ++summary.n_completed;
        count_tokens(result, summary, n_cache_prompt);
        const std::optional<double> tpot =
            time_per_output_token(result.e2e_s, result.ttft_s, result.output_tokens());
        latencies.ttfts.push_back(result.ttft_s);
        if (tpot) latencies.tpots.push_back(*tpot);
        latencies.itls.insert(latencies.itls.end(), result.itls_s.begin(), result.itls_s.end());
        latencies.e2els.push_back(result.e2e_s);
        sum_e2e += result.e2e_s;
        if (meets_slo(options.slo, result.ttft_s, tpot)) ++n_good;
    }
    const double duration = run.duration_s;
    summary.request_throughput = per_second(static_cast<double>(summary.n_completed), duration);
    summary.input_throughput =
        per_second(static_cast<double>(summary.total_input_tokens), duration);
    summary.output_throughput =
        per_second(static_cast<double>(summary.total_output_tokens), duration);
    summary.total_token_throughput = summary.input_throughput + summary.output_throughput;
    summary.ttft_ms = distribution_ms(latencies.ttfts);
    summary.tpot_ms = distribution_ms(latencies.tpots);
    summary.itl_ms = distribution_ms(latencies.itls);
    summary.e2el_ms = distribution_ms(latencies.e2els);
    summary.mean_concurrency = per_second(sum_e2e, duration);
    if (options.slo.any()) {
        summary.n_good = n_good;
        summary.request_goodput = goodput(n_good, duration);
    }
    if (n_cache_prompt > 0) {
        summary.cached_token_share =
            static_cast<double>(summary.total_cached_tokens) / static_cast<double>(n_cache_prompt);
    }
    if (options.gpu_hour_cost && summary.output_throughput > 0.0) {
        summary.cost_per_million_output_tokens = cost_per_million_tokens(
            *options.gpu_hour_cost, summary.output_throughput, options.gpus_per_replica);
        summary.cost_per_million_total_tokens = cost_per_million_tokens(
            *options.gpu_hour_cost, summary.total_token_throughput, options.gpus_per_replica);
    }
    return summary;
}

}  // namespace ladder::tools
