#include "ladder/tools/bench_json.h"

#include <fmt/format.h>
#include <cmath>

#include <fstream>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

template <typename T>
json or_null(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

void put_distribution(json& out, const char* name, const Distribution& ms) {
    out[fmt::format("mean_{}_ms", name)] = ms.mean;
    out[fmt::format("median_{}_ms", name)] = ms.median;
    out[fmt::format("std_{}_ms", name)] = ms.stddev;
    out[fmt::format("p90_{}_ms", name)] = ms.p90;
    out[fmt::format("p99_{}_ms", name)] = ms.p99;
}

void put_requests(json& out, const BenchRun& run) {
    json input_lens = json::array(), output_lens = json::array(), ttfts = json::array(),
         itls = json::array(), e2els = json::array(), cached = json::array(),
         stream_lens = json::array(), start_times = json::array(), errors = json::array();
    for (const RequestResult& result : run.results) {
        input_lens.push_back(result.prompt_tokens());
        output_lens.push_back(result.success ? result.output_tokens() : 0);
        ttfts.push_back(result.success ? result.ttft_s : 0.0);
        itls.push_back(result.itls_s);
        e2els.push_back(result.success ? result.e2e_s : 0.0);
        cached.push_back(or_null(result.usage_cached_tokens));
        stream_lens.push_back(result.n_stream_tokens);
        start_times.push_back(result.start_s);
        errors.push_back(result.error);
    }
    out["input_lens"] = std::move(input_lens);
    out["output_lens"] = std::move(output_lens);
    out["ttfts"] = std::move(ttfts);
    out["itls"] = std::move(itls);
    out["errors"] = std::move(errors);
    // ladder's own per-request arrays.
    out["e2els"] = std::move(e2els);
    out["cached_tokens"] = std::move(cached);
    out["stream_output_lens"] = std::move(stream_lens);
    out["start_times"] = std::move(start_times);
}

// vLLM's keys: the acceptance rate in percent, per position as fractions.
void put_spec_decode(json& out, const engine::SpecDecodeStats& stats) {
    const engine::SpecDecodeSummary summary = engine::summarize(stats);
    out["spec_decode_acceptance_rate"] = summary.acceptance_rate * 100.0;
    out["spec_decode_acceptance_length"] = summary.acceptance_length;
    out["spec_decode_num_drafts"] = stats.n_drafts;
    out["spec_decode_draft_tokens"] = stats.n_draft_tokens;
    out["spec_decode_accepted_tokens"] = stats.n_accepted_tokens;
    out["spec_decode_per_position_acceptance_rates"] = summary.per_position_acceptance_rates;
}

}  // namespace

json bench_summary_json(const BenchSummary& s, const BenchInfo& info) {
    json out = {
        {"date", info.date},
        {"backend", info.endpoint == "chat" ? "openai-chat" : "openai"},
        {"base_url", info.base_url},
        {"endpoint", info.endpoint},
        {"model_id", info.model},
        {"dataset", info.dataset},
        {"seed", info.seed},
        {"num_prompts", info.n_prompts},
        // vLLM writes an unlimited rate as the string "inf".
        {"request_rate", std::isfinite(s.request_rate) && s.request_rate > 0.0
                             ? json(s.request_rate)
                             : json("inf")},
        {"burstiness", info.burstiness},
        {"temperature", info.sampling.temperature},
        {"top_p", or_null(info.sampling.top_p)},
        {"top_k", or_null(info.sampling.top_k)},
        {"min_p", or_null(info.sampling.min_p)},
        {"max_concurrency", s.max_concurrency > 0 ? json(s.max_concurrency) : json(nullptr)},
        {"duration", s.duration_s},
        {"completed", s.n_completed},
        {"failed", s.n_failed},
        {"total_input_tokens", s.total_input_tokens},
        {"total_output_tokens", s.total_output_tokens},
        {"request_throughput", s.request_throughput},
        {"request_goodput", or_null(s.request_goodput)},
        {"input_throughput", s.input_throughput},
        {"output_throughput", s.output_throughput},
        {"total_token_throughput", s.total_token_throughput},
        {"mean_concurrency", s.mean_concurrency},
        {"good_requests", or_null(s.n_good)},
        {"slo_ttft_ms", or_null(info.slo.ttft_ms)},
        {"slo_tpot_ms", or_null(info.slo.tpot_ms)},
        {"total_cached_tokens", s.total_cached_tokens},
        {"cached_token_share", or_null(s.cached_token_share)},
        {"usage_mismatches", s.n_usage_mismatches},
        {"requests_without_usage", s.n_without_usage},
        {"gpu_hour_cost", or_null(info.gpu_hour_cost)},
        {"cost_per_million_output_tokens", or_null(s.cost_per_million_output_tokens)},
        {"cost_per_million_total_tokens", or_null(s.cost_per_million_total_tokens)},
    };
    put_distribution(out, "ttft", s.ttft_ms);
    put_distribution(out, "tpot", s.tpot_ms);
    put_distribution(out, "itl", s.itl_ms);
    put_distribution(out, "e2el", s.e2el_ms);
    if (s.spec_decode) put_spec_decode(out, *s.spec_decode);
    return out;
}

json bench_result_json(const BenchRun& run, const BenchSummary& s, const BenchInfo& info) {
    json out = bench_summary_json(s, info);
    put_requests(out, run);
    return out;
}

json sweep_result_json(const std::vector<json>& levels) {
    if (levels.empty()) return json::object();
    size_t best = 0;
    for (size_t i = 1; i < levels.size(); ++i) {
        if (levels[i]["output_throughput"].get<double>() >
            levels[best]["output_throughput"].get<double>()) {
            best = i;
        }
    }
    json out = levels[best];
    out["sweep_best_max_concurrency"] = levels[best]["max_concurrency"];
    out["sweep"] = levels;
    return out;
}

void write_json_file(const std::string& path, const json& value) {
    std::ofstream file(path);
    if (!file) util::fail("cannot write {}", path);
    file << value.dump(2) << '\n';
    if (!file) util::fail("writing {} failed", path);
}

}  // namespace ladder::tools
