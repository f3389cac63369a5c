// `ladder bench`'s view of speculative decoding: the spec_decode counters read
// from a Prometheus text (ladder's names or vLLM's), their difference over a
// run, and the figures vLLM's bench derives from them.
#include <gtest/gtest.h>

#include "ladder/engine/spec_decode_stats.h"
#include "ladder/tools/bench_spec_decode.h"

namespace ladder::tools {
namespace {

TEST(BenchSpecDecode, reads_the_counters_by_name_and_position) {
    const char* text =
        "# HELP ladder:spec_decode_num_drafts_total Verifications.\n"
        "# TYPE ladder:spec_decode_num_drafts_total counter\n"
        "ladder:spec_decode_num_drafts_total{model_name=\"m\"} 10\n"
        "ladder:spec_decode_num_draft_tokens_total{model_name=\"m\"} 30\n"
        "ladder:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 18\n"
        "ladder:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"0\"} 9\n"
        "ladder:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"2\"} 3\n"
        "ladder:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"1\"} 6\n"
        "ladder:generation_tokens_total{model_name=\"m\"} 99\n";
    const std::optional<engine::SpecDecodeStats> stats = parse_spec_decode_metrics(text);
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->n_drafts, 10);
    EXPECT_EQ(stats->n_draft_tokens, 30);
    EXPECT_EQ(stats->n_accepted_tokens, 18);
    EXPECT_EQ(stats->n_accepted_per_position, (std::vector<int64_t>{9, 6, 3}));
    const engine::SpecDecodeSummary summary = engine::summarize(*stats);
    EXPECT_DOUBLE_EQ(summary.acceptance_rate, 0.6);
    EXPECT_DOUBLE_EQ(summary.acceptance_length, 2.8);
    EXPECT_EQ(summary.per_position_acceptance_rates, (std::vector<double>{0.9, 0.6, 0.3}));
}

TEST(BenchSpecDecode, reads_vllms_names_and_nothing_without_counters) {
    const std::optional<engine::SpecDecodeStats> vllm =
        parse_spec_decode_metrics("vllm:spec_decode_num_drafts_total{engine=\"0\"} 4.0\n");
    ASSERT_TRUE(vllm);
    EXPECT_EQ(vllm->n_drafts, 4);
    EXPECT_FALSE(parse_spec_decode_metrics("ladder:generation_tokens_total 5\n"));
    EXPECT_FALSE(parse_spec_decode_metrics("ladder:spec_decode_num_drafts_total nan\n"));
}

TEST(BenchSpecDecode, a_run_is_the_difference_of_the_counters) {
    engine::SpecDecodeStats before{.n_drafts = 2,
                                   .n_draft_tokens = 6,
                                   .n_accepted_tokens = 4,
                                   .n_accepted_per_position = {2, 1, 1}};
    engine::SpecDecodeStats after{.n_drafts = 5,
                                  .n_draft_tokens = 15,
                                  .n_accepted_tokens = 7,
                                  .n_accepted_per_position = {4, 2, 1}};
    const engine::SpecDecodeStats run = engine::difference(after, before);
    EXPECT_EQ(run.n_drafts, 3);
    EXPECT_EQ(run.n_draft_tokens, 9);
    EXPECT_EQ(run.n_accepted_tokens, 3);
    EXPECT_EQ(run.n_accepted_per_position, (std::vector<int64_t>{2, 1, 0}));
}

}  // namespace
}  // namespace ladder::tools
