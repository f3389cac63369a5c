#include "ladder/tools/bench_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ladder/tools/report_format.h"

namespace ladder::tools {

namespace {

constexpr int kWidth = 50;
constexpr int kLabelWidth = 40;

std::string row(std::string_view label, const std::string& value) {
    return fmt::format("{:<{}} {}\n", label, kLabelWidth, value);
}

std::string rule(std::string_view title, char fill) {
    const int n_fill = kWidth - static_cast<int>(title.size());
    const int left = std::max(0, n_fill / 2);
    const int right = std::max(0, n_fill - left);
    return std::string(static_cast<size_t>(left), fill) + std::string(title) +
           std::string(static_cast<size_t>(right), fill) + "\n";
}

std::string distribution_block(std::string_view title, std::string_view name,
                               const Distribution& ms) {
    return rule(title, '-') +
           row(fmt::format("Mean {} (ms):", name), fmt::format("{:.2f}", ms.mean)) +
           row(fmt::format("Median {} (ms):", name), fmt::format("{:.2f}", ms.median)) +
           row(fmt::format("P90 {} (ms):", name), fmt::format("{:.2f}", ms.p90)) +
           row(fmt::format("P99 {} (ms):", name), fmt::format("{:.2f}", ms.p99));
}

// vLLM's block, figure for figure.
std::string spec_decode_block(const engine::SpecDecodeStats& stats) {
    const engine::SpecDecodeSummary summary = engine::summarize(stats);
    std::string out = rule("Speculative Decoding", '-');
    out += row("Acceptance rate (%):", fmt::format("{:.2f}", summary.acceptance_rate * 100.0));
    out += row("Acceptance length:", fmt::format("{:.2f}", summary.acceptance_length));
    out += row("Drafts:", std::to_string(stats.n_drafts));
    out += row("Draft tokens:", std::to_string(stats.n_draft_tokens));
    out += row("Accepted tokens:", std::to_string(stats.n_accepted_tokens));
    if (!summary.per_position_acceptance_rates.empty()) {
        out += "Per-position acceptance (%):\n";
        for (size_t i = 0; i < summary.per_position_acceptance_rates.size(); ++i) {
            out += row(fmt::format("  Position {}:", i),
                       fmt::format("{:.2f}", summary.per_position_acceptance_rates[i] * 100.0));
        }
    }
    return out;
}

std::string slo_text(const LatencySlo& slo) {
    std::string text;
    if (slo.ttft_ms) text += fmt::format("TTFT <= {} ms", *slo.ttft_ms);
    if (slo.tpot_ms) text += fmt::format("{}TPOT <= {} ms", text.empty() ? "" : ", ", *slo.tpot_ms);
    return text;
}

}  // namespace

std::string format_request_rate(double rate) {
    return std::isfinite(rate) && rate > 0.0 ? fmt::format("{} req/s", rate) : "inf";
}

std::string describe_sampling(const BenchSampling& sampling) {
    std::string out = sampling.temperature == 0.0
                          ? std::string("greedy")
                          : fmt::format("temperature {}", sampling.temperature);
    if (sampling.top_p) out += fmt::format(", top_p {}", *sampling.top_p);
    if (sampling.top_k) out += fmt::format(", top_k {}", *sampling.top_k);
    if (sampling.min_p) out += fmt::format(", min_p {}", *sampling.min_p);
    return out;
}

std::string format_summary(const BenchSummary& s, const BenchInfo& info) {
    std::string out = rule(" Serving Benchmark Result ", '=');
    out += row("Endpoint:", fmt::format("{} ({})", info.base_url, info.endpoint));
    out += row("Model:", info.model);
    out += row("Dataset:", info.dataset);
    out += row("Sampling:", describe_sampling(info.sampling));
    out += row("Successful requests:", std::to_string(s.n_completed));
    out += row("Failed requests:", std::to_string(s.n_failed));
    out += row("Request rate:", format_request_rate(s.request_rate));
    out += row("Maximum request concurrency:",
               s.max_concurrency > 0 ? std::to_string(s.max_concurrency) : "none");
    out += row("Mean requests in flight:", fmt::format("{:.2f}", s.mean_concurrency));
    out += row("Benchmark duration (s):", fmt::format("{:.2f}", s.duration_s));
    out += row("Total input tokens:", std::to_string(s.total_input_tokens));
    out += row("Total generated tokens:", std::to_string(s.total_output_tokens));
    out += row("Request throughput (req/s):", fmt::format("{:.2f}", s.request_throughput));
    if (s.request_goodput) {
        out += row("Request goodput (req/s):",
                   fmt::format("{:.2f} ({} of {} met {})", *s.request_goodput, *s.n_good,
                               s.n_completed, slo_text(info.slo)));
    }
    out += row("Input token throughput (tok/s):", fmt::format("{:.2f}", s.input_throughput));
    out += row("Output token throughput (tok/s):", fmt::format("{:.2f}", s.output_throughput));
    out += row("Total token throughput (tok/s):", fmt::format("{:.2f}", s.total_token_throughput));
    out +=
        row("Cached prompt tokens:",
            s.cached_token_share ? fmt::format("{} ({:.1f}% of the prompt tokens)",
                                               s.total_cached_tokens, *s.cached_token_share * 100.0)
                                 : std::string("not reported by the server"));
    if (s.n_usage_mismatches > 0) {
        out +=
            row("Stream chunks differing from usage:",
                fmt::format("{} requests (output tokens taken from usage)", s.n_usage_mismatches));
    }
    if (s.n_without_usage > 0) {
        out += row("Requests without usage:",
                   fmt::format("{} (output tokens counted from the stream)", s.n_without_usage));
    }
    if (s.cost_per_million_output_tokens) {
        out += row("Cost per million output tokens:",
                   fmt::format("{} (at {} per GPU-hour)",
                               format_dollars(*s.cost_per_million_output_tokens),
                               format_dollars(*info.gpu_hour_cost)));
        out += row("Cost per million tokens in and out:",
                   format_dollars(*s.cost_per_million_total_tokens));
    }
    out += distribution_block("Time to First Token", "TTFT", s.ttft_ms);
    out += distribution_block("Time per Output Token (excl. 1st token)", "TPOT", s.tpot_ms);
    out += distribution_block("Inter-token Latency", "ITL", s.itl_ms);
    out += distribution_block("End-to-end Latency", "E2EL", s.e2el_ms);
    if (s.spec_decode) out += spec_decode_block(*s.spec_decode);
    return out + std::string(kWidth, '=') + "\n";
}

std::string format_errors(const BenchRun& run, size_t max_lines) {
    std::map<std::string, int64_t> counts;
    for (const RequestResult& result : run.results) {
        if (!result.success) ++counts[result.error];
    }
    std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string out;
    for (size_t i = 0; i < sorted.size() && i < max_lines; ++i) {
        out += fmt::format("  {} × {}\n", sorted[i].second, sorted[i].first);
    }
    if (sorted.size() > max_lines) {
        out += fmt::format("  ... and {} other errors (all in --json's `errors`)\n",
                           sorted.size() - max_lines);
    }
    return out;
}

std::string format_sweep_table(const std::vector<BenchSummary>& levels) {
    std::string out =
        "| concurrency | completed | failed | req/s | output tok/s | total tok/s | TTFT median ms "
        "| TTFT p99 ms | TPOT median ms | TPOT p99 ms "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (const BenchSummary& s : levels) {
        out += fmt::format(
            "| {} | {} | {} | {:.2f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | "
            "{:.1f} |\n",
            s.max_concurrency, s.n_completed, s.n_failed, s.request_throughput, s.output_throughput,
            s.total_token_throughput, s.ttft_ms.median, s.ttft_ms.p99, s.tpot_ms.median,
            s.tpot_ms.p99);
    }
    return out;
}

}  // namespace ladder::tools
