// The simulator's workloads: arrivals (Poisson as before, gamma burstiness,
// the diurnal curve), bench's prompts drawn lazily, traces and their errors,
// the conversion of bench results, and the summary kept without the run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_dataset.h"
#include "ladder/tools/seeded_random.h"
#include "ladder/tools/sim_summary.h"
#include "ladder/tools/sim_trace_convert.h"
#include "ladder/tools/sim_workload.h"
#include "ladder/tools/simulator.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace sim_workload_test {

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const util::InputError& error) {
        return error.what();
    }
    return "";
}

std::vector<double> gaps_of(const std::vector<double>& times) {
    std::vector<double> gaps;
    for (size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
    return gaps;
}

TEST(Arrivals, PoissonIsTheExponentialDrawAsBefore) {
    const std::vector<double> times = arrival_times(1000, 4.0, 11);
    SeededRandom random(11);
    double expected = 0.0;
    EXPECT_EQ(times[0], 0.0);
    for (size_t i = 1; i < times.size(); ++i) {
        expected += -std::log1p(-random.unit()) / 4.0;
        ASSERT_EQ(times[i], expected);
    }
}

TEST(Arrivals, BurstinessIsTheGammaShape) {
    for (const double burstiness : {0.25, 1.0, 4.0}) {
        ArrivalOptions options;
        options.request_rate = 10.0;
        options.burstiness = burstiness;
        const std::vector<double> gaps = gaps_of(arrival_times(200001, options, 3));
        double mean = 0.0;
        for (double gap : gaps) mean += gap;
        mean /= static_cast<double>(gaps.size());
        double variance = 0.0;
        for (double gap : gaps) variance += (gap - mean) * (gap - mean);
        variance /= static_cast<double>(gaps.size());
        // Gamma(k, 1 / (rate k)): mean 1 / rate, squared coefficient of variation 1 / k.
        EXPECT_NEAR(mean, 0.1, 0.002) << burstiness;
        EXPECT_NEAR(variance / (mean * mean), 1.0 / burstiness, 0.05 / burstiness) << burstiness;
    }
}

TEST(Arrivals, DiurnalCurveIsLowAtTheStartAndHighHalfAPeriodIn) {
    ArrivalOptions options;
    options.request_rate = 50.0;
    options.diurnal_amplitude = 0.8;
    options.diurnal_period_s = 100.0;
    const std::vector<double> times = arrival_times(50000, options, 5);
    // 50,000 at a mean of 50/s over whole periods: about ten periods.
    EXPECT_NEAR(times.back(), 1000.0, 15.0);
    int64_t night = 0, noon = 0;
    for (double t : times) {
        const double phase = std::fmod(t, 100.0);
        if (phase < 10.0 || phase >= 90.0) ++night;
        if (phase >= 40.0 && phase < 60.0) ++noon;
    }
    // The rate's integral over those windows: 50 (20 -/+ 0.8 x 2 x 100 sin(0.2 pi) / (2 pi)).
    const double swing =
        0.8 * 2.0 * 100.0 * std::sin(0.2 * std::numbers::pi) / (2.0 * std::numbers::pi);
    EXPECT_NEAR(static_cast<double>(night) / static_cast<double>(noon),
                (20.0 - swing) / (20.0 + swing), 0.03);
}

TEST(Arrivals, BadShapesNameTheirFlag) {
    ArrivalOptions options;
    options.burstiness = -1.0;
    EXPECT_NE(error_of([&] { check_arrival_options(options); }).find("--burstiness"),
              std::string::npos);
    options = {};
    options.diurnal_amplitude = 1.0;
    EXPECT_NE(error_of([&] { check_arrival_options(options); }).find("--diurnal-amplitude"),
              std::string::npos);
    options = {};
    options.diurnal_period_s = 0.0;
    EXPECT_NE(error_of([&] { check_arrival_options(options); }).find("--diurnal-period"),
              std::string::npos);
}

TEST(SyntheticRequests, DrawBenchsPromptsOneAtATime) {
    for (const char* kind : {"random", "prefix"}) {
        DatasetOptions dataset;
        dataset.kind = kind;
        dataset.n_prompts = 20;
        dataset.input_len = 30;
        dataset.output_len = 7;
        dataset.range_ratio = 0.5;
        dataset.prefix_len = 40;
        dataset.n_prefixes = 3;
        dataset.seed = 9;
        const std::vector<BenchPrompt> prompts = make_dataset(dataset);
        SyntheticRequests stream(dataset, ArrivalOptions{});
        SimRequest request;
        for (const BenchPrompt& prompt : prompts) {
            ASSERT_TRUE(stream.next(request));
            EXPECT_EQ(request.prompt, prompt.payload.get<std::vector<int32_t>>()) << kind;
            EXPECT_EQ(request.output_len, prompt.max_tokens);
        }
        EXPECT_FALSE(stream.next(request));
    }
}

std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream(path) << text;
    return path;
}

TEST(TraceRequests, PrefixIdsShareTheirLeadingTokens) {
    const std::string path = write_file(
        "ladder_trace_ok.jsonl",
        "{\"arrival_s\": 0, \"input_len\": 40, \"output_len\": 2, \"prefix_id\": \"a\", "
        "\"prefix_len\": 32}\n\n"
        "{\"arrival_s\": 0.5, \"input_len\": 36, \"output_len\": 3, \"prefix_id\": \"a\", "
        "\"prefix_len\": 16}\n"
        "{\"arrival_s\": 0.5, \"input_len\": 20, \"output_len\": 1}\n");
    TraceRequests trace(path, std::nullopt, 0);
    SimRequest first, second, third, none;
    ASSERT_TRUE(trace.next(first) && trace.next(second) && trace.next(third));
    EXPECT_FALSE(trace.next(none));
    EXPECT_EQ(first.prompt.size(), 40u);
    EXPECT_EQ(second.arrival_s, 0.5);
    EXPECT_EQ(third.output_len, 1);
    EXPECT_TRUE(
        std::equal(second.prompt.begin(), second.prompt.begin() + 16, first.prompt.begin()));
    EXPECT_NE(second.prompt[16], first.prompt[16]);
    EXPECT_NE(third.prompt[0], first.prompt[0]);
    TraceRequests capped(path, 1, 0);
    EXPECT_TRUE(capped.next(none));
    EXPECT_FALSE(capped.next(none));
}

TEST(TraceRequests, AMalformedLineIsNamed) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{\"arrival_s\": 0, \"input_len\": 4, \"output_len\": 2}\n{\"arrival_s\": 1,", "line 2"},
        {"{\"input_len\": 4, \"output_len\": 2}\n", "arrival_s"},
        {"{\"arrival_s\": -1, \"input_len\": 4, \"output_len\": 2}\n", "negative"},
        {"{\"arrival_s\": 0, \"input_len\": 0, \"output_len\": 2}\n", "input_len"},
        {"{\"arrival_s\": 0, \"input_len\": 4, \"output_len\": 2.5}\n", "output_len"},
        {"{\"arrival_s\": 2, \"input_len\": 4, \"output_len\": 2}\n"
         "{\"arrival_s\": 1, \"input_len\": 4, \"output_len\": 2}\n",
         "arrival order"},
        {"{\"arrival_s\": 0, \"input_len\": 4, \"output_len\": 2, \"prefix_id\": 1, "
         "\"prefix_len\": 5}\n",
         "prefix_len"},
        {"{\"arrival_s\": 0, \"input_len\": 4, \"output_len\": 2, \"prefix_len\": 2}\n",
         "prefix_id"},
    };
    for (const auto& [text, expected] : cases) {
        const std::string path = write_file("ladder_trace_bad.jsonl", text);
        const std::string message = error_of([&] {
            TraceRequests trace(path, std::nullopt, 0);
            SimRequest request;
            while (trace.next(request)) {
            }
        });
        EXPECT_NE(message.find(expected), std::string::npos) << message;
        EXPECT_NE(message.find("ladder_trace_bad.jsonl line"), std::string::npos) << message;
    }
}

TEST(TraceConvert, BenchResultBecomesATraceInArrivalOrder) {
    const nlohmann::json result = {{"input_lens", {100, 50, 70}},
                                   {"output_lens", {10, 0, 5}},
                                   {"start_times", {2.5, 1.0, 1.5}},
                                   {"errors", {"", "timed out", ""}}};
    const std::vector<TraceRecord> records = trace_from_bench_json(result, "r.json", {}, 0);
    ASSERT_EQ(records.size(), 2u);  // the failed request is left out
    EXPECT_EQ(records[0].input_len, 70);
    EXPECT_DOUBLE_EQ(records[0].arrival_s, 0.0);
    EXPECT_DOUBLE_EQ(records[1].arrival_s, 1.0);
    // Round trip through the line format.
    const TraceRecord back = parse_trace_line(trace_line(records[1]), "here");
    EXPECT_EQ(back.input_len, 100);
    EXPECT_EQ(back.output_len, 10);
    EXPECT_NE(error_of([] {
                  (void)trace_from_bench_json({{"input_lens", {1}}}, "r.json", {}, 0);
              }).find("output_lens"),
              std::string::npos);
}

TEST(StreamingSummary, AgreesWithTheExactSummary) {
    // A run long enough to queue, summarised both ways.
    SimulationOptions options;
    options.profile.source = "test";
    options.profile.fixed_s = 0.010;
    options.profile.per_token_s = 0.0002;
    options.profile.n_kv_blocks = 4000;
    options.n_replicas = 2;
    options.arrivals.request_rate = 40.0;
    DatasetOptions dataset;
    dataset.n_prompts = 2000;
    dataset.input_len = 100;
    dataset.output_len = 20;
    dataset.range_ratio = 0.9;
    SummaryOptions summary_options;
    summary_options.slo.ttft_ms = 40.0;
    SyntheticRequests recorded_stream(dataset, options.arrivals);
    RunRecorder recorder;
    const SimulationResult recorded = simulate(recorded_stream, recorder, options);
    recorder.run().duration_s = recorded.duration_s;
    const BenchSummary exact = summarize(recorder.run(), summary_options);
    SyntheticRequests streamed_stream(dataset, options.arrivals);
    StreamingSummary streaming(summary_options);
    const SimulationResult streamed = simulate(streamed_stream, streaming, options);
    const BenchSummary folded = streaming.summary(streamed.duration_s, 0, 40.0);
    EXPECT_EQ(folded.n_completed, exact.n_completed);
    EXPECT_EQ(folded.total_output_tokens, exact.total_output_tokens);
    EXPECT_EQ(folded.n_good, exact.n_good);
    EXPECT_NEAR(folded.ttft_ms.mean, exact.ttft_ms.mean, 1e-9);
    EXPECT_NEAR(folded.itl_ms.stddev, exact.itl_ms.stddev, 1e-9);
    for (const auto& [a, b] :
         {std::pair{folded.ttft_ms, exact.ttft_ms}, std::pair{folded.tpot_ms, exact.tpot_ms},
          std::pair{folded.itl_ms, exact.itl_ms}, std::pair{folded.e2el_ms, exact.e2el_ms}}) {
        EXPECT_NEAR(a.median, b.median, b.median * 6e-4);
        EXPECT_NEAR(a.p90, b.p90, b.p90 * 6e-4);
        EXPECT_NEAR(a.p99, b.p99, b.p99 * 6e-4);
    }
}

}  // namespace sim_workload_test
}  // namespace ladder::tools
