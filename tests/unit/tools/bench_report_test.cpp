// `ladder bench`'s outputs: the JSON under vLLM's key names (and readable by
// `ladder cost --from-bench`), the text report, the chart data and script.
#include "ladder/tools/bench_json.h"

#include <gtest/gtest.h>

#include "ladder/tools/bench_html.h"
#include "ladder/tools/bench_plot.h"
#include "ladder/tools/bench_report.h"
#include "ladder/tools/cost.h"

namespace ladder::tools {
namespace {

BenchRun small_run() {
    BenchRun run;
    run.duration_s = 2.0;
    run.max_concurrency = 2;
    run.request_rate = INFINITY;
    RequestResult ok;
    ok.success = true;
    ok.ttft_s = 0.1;
    ok.e2e_s = 0.4;
    ok.itls_s = {0.1, 0.1, 0.1};
    ok.n_stream_tokens = 4;
    ok.usage_completion_tokens = 4;
    ok.usage_prompt_tokens = 16;
    ok.usage_cached_tokens = 0;
    RequestResult failed;
    failed.error = "HTTP 429: queue full";
    failed.prompt_len_estimate = 16;
    run.results = {ok, ok, failed};
    return run;
}

TEST(BenchJson, has_vllms_keys_and_cost_reads_it) {
    const BenchRun run = small_run();
    const BenchSummary summary = summarize(run, {});
    BenchInfo info;
    info.endpoint = "completions";
    const nlohmann::json out = bench_result_json(run, summary, info);
    for (const char* key : {"completed",
                            "failed",
                            "duration",
                            "request_throughput",
                            "output_throughput",
                            "total_token_throughput",
                            "total_input_tokens",
                            "total_output_tokens",
                            "mean_ttft_ms",
                            "median_ttft_ms",
                            "p90_ttft_ms",
                            "p99_ttft_ms",
                            "std_ttft_ms",
                            "mean_tpot_ms",
                            "p99_tpot_ms",
                            "mean_itl_ms",
                            "p99_itl_ms",
                            "mean_e2el_ms",
                            "p99_e2el_ms",
                            "ttfts",
                            "itls",
                            "input_lens",
                            "output_lens",
                            "errors",
                            "max_concurrency",
                            "request_rate"}) {
        EXPECT_TRUE(out.contains(key)) << key;
    }
    EXPECT_EQ(out["completed"], 2);
    EXPECT_EQ(out["failed"], 1);
    EXPECT_EQ(out["request_rate"], "inf") << "as vLLM writes an unlimited rate";
    EXPECT_EQ(out["output_lens"], nlohmann::json::array({4, 4, 0}));
    EXPECT_EQ(out["errors"][2], "HTTP 429: queue full");
    EXPECT_EQ(out["itls"][0].size(), 3u);
    EXPECT_DOUBLE_EQ(out["output_throughput"].get<double>(), 4.0);
    EXPECT_DOUBLE_EQ(out["median_ttft_ms"].get<double>(), 100.0);

    const BenchThroughput read = parse_bench_result(out.dump(), "bench.json");
    EXPECT_DOUBLE_EQ(read.output_tokens_per_second, 4.0);
    EXPECT_DOUBLE_EQ(*read.total_tokens_per_second, 20.0);
}

TEST(BenchJson, a_sweep_puts_its_best_level_on_top) {
    std::vector<nlohmann::json> levels = {{{"output_throughput", 10.0}, {"max_concurrency", 1}},
                                          {{"output_throughput", 30.0}, {"max_concurrency", 4}},
                                          {{"output_throughput", 20.0}, {"max_concurrency", 8}}};
    const nlohmann::json out = sweep_result_json(levels);
    EXPECT_EQ(out["max_concurrency"], 4);
    EXPECT_EQ(out["sweep_best_max_concurrency"], 4);
    EXPECT_EQ(out["sweep"].size(), 3u);
    EXPECT_EQ(out["sweep"][0]["max_concurrency"], 1) << "levels in the order run";
}

TEST(BenchReport, summary_and_errors_read_like_vllms) {
    const BenchRun run = small_run();
    SummaryOptions options;
    options.slo.ttft_ms = 50.0;
    options.gpu_hour_cost = 2.0;
    BenchInfo info;
    info.slo = options.slo;
    info.gpu_hour_cost = 2.0;
    const std::string text = format_summary(summarize(run, options), info);
    for (const char* line :
         {"Successful requests:                     2",
          "Failed requests:                         1",
          "Request goodput (req/s):", "Output token throughput (tok/s):", "Median TTFT (ms):",
          "P90 TPOT (ms):", "P99 ITL (ms):", "Cost per million output tokens:",
          "Cached prompt tokens:                    0 (0.0% of the prompt tokens)"}) {
        EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
    }
    EXPECT_EQ(format_errors(run, 5), "  1 × HTTP 429: queue full\n");
}

TEST(BenchPlot, data_rows_are_sorted_by_concurrency_and_the_script_draws_both_formats) {
    BenchSummary low, high;
    low.max_concurrency = 1;
    low.tpot_ms.median = 20.0;
    high.max_concurrency = 8;
    const std::string data = chart_data({high, low});
    EXPECT_LT(data.find("\"c=1\""), data.find("\"c=8\""));
    EXPECT_NE(data.find("50.0000 \"c=1\""), std::string::npos) << "1000 / 20 ms per user\n" << data;
    const std::string script = chart_script(true);
    for (const char* name : {"throughput_vs_concurrency", "ttft_vs_throughput",
                             "tpot_vs_throughput", "latency_vs_throughput"}) {
        EXPECT_NE(script.find(std::string(name) + ".png"), std::string::npos) << name;
        EXPECT_NE(script.find(std::string(name) + ".svg"), std::string::npos) << name;
    }
    EXPECT_NE(script.find("set logscale x 2"), std::string::npos);
}

TEST(BenchHtml, escapes_text_and_encodes_base64) {
    EXPECT_EQ(html_escape("<a href=\"x\">&</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
    EXPECT_EQ(base64("Man"), "TWFu");
    EXPECT_EQ(base64("Ma"), "TWE=");
    EXPECT_EQ(base64("M"), "TQ==");
    EXPECT_EQ(base64(""), "");
}

}  // namespace
}  // namespace ladder::tools
