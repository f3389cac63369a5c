// The sampler chain: greedy, seeded reproducibility, what top-k, top-p and
// min-p must exclude (fixed seeds, small vocabularies), exact penalties,
// parameter validation and log-probabilities.
#include "ladder/engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ladder/util/error.h"

namespace ladder::engine {
namespace {

SamplingParams seeded(uint64_t seed) {
    SamplingParams params;
    params.seed = seed;
    return params;
}

// Logits whose softmax is exactly the given probabilities (up to rounding).
std::vector<float> logits_of_probs(const std::vector<double>& probs) {
    std::vector<float> logits;
    for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
    return logits;
}

std::vector<float> random_logits(std::size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<float> logits(n);
    // Integer-valued draws scaled down: deterministic on every standard library.
    for (float& l : logits) l = static_cast<float>(gen() % 2000) / 200.0f - 5.0f;
    return logits;
}

// Draws the tokens at positions 0..n-1 from fresh copies of the same logits
// (sample() edits them).
std::vector<TokenId> draw_many(Sampler& sampler, const std::vector<float>& logits, int n) {
    std::vector<TokenId> tokens;
    for (int i = 0; i < n; ++i) {
        std::vector<float> copy = logits;
        tokens.push_back(sampler.sample(copy, {}, i));
    }
    return tokens;
}

std::set<TokenId> distinct(const std::vector<TokenId>& tokens) {
    return {tokens.begin(), tokens.end()};
}

TEST(Sampler, greedy_picks_the_argmax_and_the_lowest_id_on_ties) {
    SamplingParams params;
    params.temperature = 0.0f;
    Sampler sampler(params);
    std::vector<float> logits = {1.0f, 5.0f, 3.0f, 5.0f, -2.0f};
    EXPECT_EQ(sampler.sample(logits, {}, 0), 1);
    std::vector<float> negative = {-3.0f, -1.0f, -2.0f};
    EXPECT_EQ(sampler.sample(negative, {}, 1), 1);
}

TEST(Sampler, greedy_sees_penalized_logits) {
    SamplingParams params;
    params.temperature = 0.0f;
    params.repetition_penalty = 1.5f;
    Sampler sampler(params);
    std::vector<float> logits = {2.0f, 1.9f};
    const std::vector<TokenId> history = {0};
    EXPECT_EQ(sampler.sample(logits, history, 1), 1) << "2.0 / 1.5 must fall below 1.9";
}

TEST(Sampler, same_seed_gives_the_same_tokens) {
    const std::vector<float> logits = random_logits(500, 7);
    SamplingParams params = seeded(42);
    params.top_k = 40;
    params.top_p = 0.95f;
    params.min_p = 0.01f;
    params.temperature = 0.8f;
    Sampler a(params);
    Sampler b(params);
    EXPECT_EQ(draw_many(a, logits, 300), draw_many(b, logits, 300));
    Sampler other(seeded(43));
    Sampler again(seeded(42));
    EXPECT_NE(draw_many(other, logits, 300), draw_many(again, logits, 300))
        << "different seeds gave 300 identical draws";
}

// Pinned against an independent Python implementation of the same draw
// (Philox4x64-10 keyed by (seed, position), the top 53 bits as a double,
// weights exp(logit - max) in float, summed in id order), so a seeded request
// gives these tokens with any standard library. The sampler now weighs by its
// own polynomial (vocab_weights.h) and sums by chunks; the tokens stayed.
TEST(Sampler, seeded_draws_are_pinned_across_standard_libraries) {
    const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.5f, 1.0f, 0.25f};
    Sampler sampler(seeded(20240601));
    const std::vector<TokenId> expected = {3, 5, 4, 2, 3, 4, 7, 6, 6, 3, 6, 2,
                                           2, 5, 1, 5, 4, 4, 6, 2, 6, 4, 1, 2};
    EXPECT_EQ(draw_many(sampler, logits, static_cast<int>(expected.size())), expected);
}

// The draw at a position does not depend on the draws before it: what lets
// verification of drafted positions draw what plain decoding would.
TEST(Sampler, a_draw_depends_on_the_position_not_on_earlier_draws) {
    const std::vector<float> logits = random_logits(300, 3);
    SamplingParams params = seeded(9);
    params.temperature = 0.9f;
    Sampler in_order(params);
    const std::vector<TokenId> forward = draw_many(in_order, logits, 40);
    Sampler backwards(params);
    for (int position = 39; position >= 0; --position) {
        std::vector<float> copy = logits;
        EXPECT_EQ(backwards.sample(copy, {}, position), forward[static_cast<size_t>(position)])
            << position;
    }
}

TEST(Sampler, distribution_is_what_sample_draws_from) {
    const std::vector<float> logits = random_logits(200, 11);
    SamplingParams params = seeded(4);
    params.temperature = 0.7f;
    params.top_k = 30;
    params.top_p = 0.9f;
    Sampler sampler(params);
    std::vector<float> copy = logits;
    const std::vector<TokenProbability> p = [&] {
        const auto d = sampler.distribution(copy, {});
        return std::vector<TokenProbability>(d.begin(), d.end());
    }();
    double total = 0.0;
    for (const TokenProbability& t : p) total += t.probability;
    EXPECT_NEAR(total, 1.0, 1e-12);
    EXPECT_LE(p.size(), 30u);
    // The same numbers drawn through draw_from give sample()'s tokens.
    for (int position = 0; position < 50; ++position) {
        std::vector<float> again = logits;
        EXPECT_EQ(sampler.sample(again, {}, position),
                  draw_from(p, sampler.uniform(position, DrawPurpose::Sample)))
            << position;
    }
    SamplingParams greedy = params;
    greedy.temperature = 0.0f;
    Sampler argmax(greedy);
    std::vector<float> third = logits;
    const auto point = argmax.distribution(third, {});
    ASSERT_EQ(point.size(), 1u);
    EXPECT_EQ(point[0].probability, 1.0);
}

// Over many chunks of the running sums (vocab_weights.h), with and without
// a temperature and top-p: the draw finds the token draw_from finds walking
// the distribution one probability at a time.
TEST(Sampler, draws_over_a_large_vocabulary_agree_with_the_distribution) {
    const std::vector<float> logits = random_logits(20000, 17);
    for (const auto& [temperature, top_p] : {std::pair{1.0f, 1.0f}, std::pair{0.7f, 0.95f}}) {
        SamplingParams params = seeded(8);
        params.temperature = temperature;
        params.top_p = top_p;
        Sampler sampler(params);
        std::vector<float> copy = logits;
        const auto d = sampler.distribution(copy, {});
        const std::vector<TokenProbability> p(d.begin(), d.end());
        ASSERT_GT(p.size(), 1000u);
        for (int position = 0; position < 200; ++position) {
            std::vector<float> again = logits;
            EXPECT_EQ(sampler.sample(again, {}, position),
                      draw_from(p, sampler.uniform(position, DrawPurpose::Sample)))
                << "temperature " << temperature << ", top_p " << top_p << ", position "
                << position;
        }
    }
}

TEST(Sampler, unseeded_samplers_differ) {
    const std::vector<float> logits(64, 0.0f);
    Sampler a{SamplingParams{}};
    Sampler b{SamplingParams{}};
    EXPECT_NE(draw_many(a, logits, 64), draw_many(b, logits, 64));
}

TEST(Sampler, tiny_temperature_approaches_greedy_without_overflow) {
    const std::vector<float> logits = {3.0f, 50.0f, 49.0f, -7.0f};
    SamplingParams params = seeded(10);
    params.temperature = 1e-30f;  // 50 / 1e-30 overflows a float
    Sampler sampler(params);
    EXPECT_EQ(distinct(draw_many(sampler, logits, 200)), (std::set<TokenId>{1}));
}

TEST(Sampler, top_k_of_one_equals_greedy) {
    for (uint32_t seed = 0; seed < 50; ++seed) {
        std::vector<float> logits = random_logits(300, seed);
        logits[17] = logits[250] = 9.5f;  // a tie at the top: the lower id wins
        SamplingParams params = seeded(seed);
        params.top_k = 1;
        params.temperature = 1.7f;
        Sampler sampler(params);
        std::vector<float> copy = logits;
        EXPECT_EQ(sampler.sample(copy, {}, 0), 17) << "seed " << seed;
    }
}

TEST(Sampler, top_k_keeps_only_the_k_largest) {
    const std::vector<float> logits = {0.1f, 2.0f, 1.5f, -1.0f, 1.9f, 0.0f, 1.0f, 0.5f};
    SamplingParams params = seeded(1);
    params.top_k = 3;
    Sampler sampler(params);
    EXPECT_EQ(distinct(draw_many(sampler, logits, 3000)), (std::set<TokenId>{1, 2, 4}));
}

TEST(Sampler, top_p_keeps_the_smallest_prefix_reaching_p) {
    // Probabilities by id: 0.3, 0.05, 0.5, 0.15 (sorted: ids 2, 0, 3, 1).
    const std::vector<float> logits = logits_of_probs({0.3, 0.05, 0.5, 0.15});
    SamplingParams params = seeded(2);
    params.top_p = 0.79f;  // 0.5 < 0.79 <= 0.5 + 0.3
    Sampler two(params);
    EXPECT_EQ(distinct(draw_many(two, logits, 4000)), (std::set<TokenId>{0, 2}));
    params.top_p = 0.81f;  // needs 0.5 + 0.3 + 0.15
    Sampler three(params);
    EXPECT_EQ(distinct(draw_many(three, logits, 4000)), (std::set<TokenId>{0, 2, 3}));
    params.top_p = 0.4f;
    Sampler one(params);
    EXPECT_EQ(distinct(draw_many(one, logits, 500)), (std::set<TokenId>{2}));
}

// A vocabulary large enough that top-p sorts in several growing steps; the
// allowed set comes from a full sort and softmax here.
TEST(Sampler, top_p_over_a_large_vocabulary_matches_a_full_sort) {
    std::vector<float> logits = random_logits(5000, 3);
    for (float& l : logits) l *= 0.4f;  // flat enough that the nucleus is large
    std::vector<TokenId> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](TokenId a, TokenId b) {
        return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    });
    const float max_logit = logits[order[0]];
    double total = 0.0;
    for (float l : logits) total += std::exp(static_cast<double>(l) - max_logit);
    const float top_p = 0.6f;
    std::set<TokenId> allowed;
    double cumulative = 0.0;
    for (TokenId id : order) {
        allowed.insert(id);
        cumulative += std::exp(static_cast<double>(logits[id]) - max_logit);
        if (cumulative >= top_p * total) break;
    }
    ASSERT_GT(allowed.size(), 300u) << "the test wants a nucleus past several sort steps";

    SamplingParams params = seeded(4);
    params.top_p = top_p;
    Sampler sampler(params);
    for (TokenId id : draw_many(sampler, logits, 1000)) {
        ASSERT_TRUE(allowed.contains(id)) << "token " << id << " is outside the top-p nucleus";
    }
}

TEST(Sampler, min_p_drops_tokens_below_a_fraction_of_the_top_probability) {
    const std::vector<float> logits = logits_of_probs({0.15, 0.5, 0.05, 0.3});
    SamplingParams params = seeded(5);
    params.min_p = 0.2f;  // keeps p >= 0.1
    Sampler loose(params);
    EXPECT_EQ(distinct(draw_many(loose, logits, 4000)), (std::set<TokenId>{0, 1, 3}));
    params.min_p = 0.5f;  // keeps p >= 0.25
    Sampler strict(params);
    EXPECT_EQ(distinct(draw_many(strict, logits, 4000)), (std::set<TokenId>{1, 3}));
}

TEST(Sampler, filters_compose_in_llama_cpp_order) {
    // top-k 3 leaves ids 1, 3, 0 (0.5, 0.3, 0.15 of the full softmax); top-p 0.8
    // on their renormalized probabilities (0.526, 0.316, 0.158) keeps ids 1 and 3.
    const std::vector<float> logits = logits_of_probs({0.15, 0.5, 0.05, 0.3});
    SamplingParams params = seeded(6);
    params.top_k = 3;
    params.top_p = 0.8f;
    params.temperature = 3.0f;  // applied last: it cannot bring id 0 back
    Sampler sampler(params);
    EXPECT_EQ(distinct(draw_many(sampler, logits, 4000)), (std::set<TokenId>{1, 3}));
}

TEST(Sampler, draws_follow_the_tempered_softmax) {
    const std::vector<float> logits = {1.0f, 2.0f, 0.0f, 1.5f};
    const float temperature = 2.0f;
    std::vector<double> expected;
    double total = 0.0;
    for (float l : logits) total += std::exp(l / temperature);
    for (float l : logits) expected.push_back(std::exp(l / temperature) / total);

    SamplingParams params = seeded(7);
    params.temperature = temperature;
    Sampler sampler(params);
    const int n = 40000;
    std::vector<int> counts(logits.size(), 0);
    for (TokenId id : draw_many(sampler, logits, n)) ++counts[id];
    for (std::size_t i = 0; i < logits.size(); ++i) {
        // Five standard deviations of a binomial frequency: about 0.012 here.
        const double sigma = std::sqrt(expected[i] * (1 - expected[i]) / n);
        EXPECT_NEAR(static_cast<double>(counts[i]) / n, expected[i], 5 * sigma) << "token " << i;
    }
}

TEST(Sampler, penalties_change_logits_exactly_as_specified) {
    SamplingParams params;
    params.repetition_penalty = 2.0f;
    params.frequency_penalty = 0.5f;
    params.presence_penalty = 0.25f;
    params.penalty_last_n = 5;
    Sampler sampler(params);
    std::vector<float> logits = {2.0f, -2.0f, 0.0f, 1.0f, 3.0f, 4.0f};
    // Token 5 falls outside the last 5; token 0 is seen twice, 1 and 2 once.
    const std::vector<TokenId> history = {5, 0, 1, 2, 0, 4};
    sampler.apply_penalties(logits, history);
    EXPECT_FLOAT_EQ(logits[0], 2.0f / 2.0f - (2 * 0.5f + 0.25f));    // positive: divided
    EXPECT_FLOAT_EQ(logits[1], -2.0f * 2.0f - (1 * 0.5f + 0.25f));   // negative: multiplied
    EXPECT_FLOAT_EQ(logits[2], 0.0f - (1 * 0.5f + 0.25f));
    EXPECT_FLOAT_EQ(logits[3], 1.0f) << "an unseen token is untouched";
    EXPECT_FLOAT_EQ(logits[4], 3.0f / 2.0f - (1 * 0.5f + 0.25f));
    EXPECT_FLOAT_EQ(logits[5], 4.0f) << "a token outside penalty_last_n is untouched";
}

TEST(Sampler, penalty_window_of_zero_is_off_and_minus_one_is_everything) {
    SamplingParams params;
    params.frequency_penalty = 1.0f;
    params.penalty_last_n = 0;
    const std::vector<TokenId> history = {0, 1, 1};
    std::vector<float> logits = {1.0f, 1.0f};
    Sampler(params).apply_penalties(logits, history);
    EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f}));
    params.penalty_last_n = -1;
    Sampler(params).apply_penalties(logits, history);
    EXPECT_EQ(logits, (std::vector<float>{0.0f, -1.0f}));
}

TEST(Sampler, sample_applies_penalties_in_place) {
    SamplingParams params = seeded(8);
    params.presence_penalty = 2.0f;
    Sampler sampler(params);
    std::vector<float> logits = {0.0f, 0.0f, 0.0f};
    const std::vector<TokenId> history = {1};
    sampler.sample(logits, history, static_cast<int64_t>(history.size()));
    EXPECT_EQ(logits, (std::vector<float>{0.0f, -2.0f, 0.0f}));
}

std::string rejection_of(const SamplingParams& params) {
    try {
        validate(params);
    } catch (const util::InputError& error) {
        return error.what();
    }
    return "";
}

TEST(Sampler, invalid_params_are_rejected_naming_the_parameter) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    struct Case {
        std::string name;
        SamplingParams params;
    };
    std::vector<Case> cases;
    auto with = [&](std::string name, auto edit) {
        SamplingParams params;
        edit(params);
        cases.push_back({std::move(name), params});
    };
    with("temperature", [](SamplingParams& p) { p.temperature = -0.1f; });
    with("temperature", [&](SamplingParams& p) { p.temperature = nan; });
    with("top_k", [](SamplingParams& p) { p.top_k = -1; });
    with("top_p", [](SamplingParams& p) { p.top_p = 0.0f; });
    with("top_p", [](SamplingParams& p) { p.top_p = 1.5f; });
    with("min_p", [](SamplingParams& p) { p.min_p = -0.5f; });
    with("min_p", [&](SamplingParams& p) { p.min_p = nan; });
    with("repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = 0.0f; });
    with("frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = 2.5f; });
    with("presence_penalty", [](SamplingParams& p) { p.presence_penalty = -3.0f; });
    with("penalty_last_n", [](SamplingParams& p) { p.penalty_last_n = -2; });
    for (const Case& c : cases) {
        const std::string message = rejection_of(c.params);
        EXPECT_NE(message.find(c.name), std::string::npos)
            << "expected a rejection naming " << c.name << ", got \"" << message << "\"";
        EXPECT_THROW(Sampler{c.params}, util::InputError) << c.name;
    }
    EXPECT_EQ(rejection_of(SamplingParams{}), "") << "the defaults must be valid";
}

TEST(Sampler, nan_logits_never_win) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> logits = {nan, 1.0f, nan, 0.5f};
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    std::vector<float> copy = logits;
    EXPECT_EQ(Sampler(greedy).sample(copy, {}, 0), 1);
    SamplingParams params = seeded(9);
    params.top_p = 0.9f;
    Sampler sampler(params);
    EXPECT_EQ(distinct(draw_many(sampler, logits, 500)), (std::set<TokenId>{1, 3}));
}

TEST(Logprobs, logprob_of_is_the_log_softmax) {
    const std::vector<float> logits = logits_of_probs({0.1, 0.2, 0.3, 0.4});
    for (TokenId id = 0; id < 4; ++id) {
        EXPECT_NEAR(logprob_of(logits, id), std::log(0.1 * (id + 1)), 1e-6) << "token " << id;
    }
    // Shifting every logit changes nothing.
    std::vector<float> shifted = logits;
    for (float& l : shifted) l += 1000.0f;
    EXPECT_NEAR(logprob_of(shifted, 3), std::log(0.4), 1e-4);
}

TEST(Logprobs, top_logprobs_are_most_likely_first_with_ties_by_id) {
    const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
    const auto top = top_logprobs(logits, 3);
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].first, 1);
    EXPECT_EQ(top[1].first, 3);
    EXPECT_EQ(top[2].first, 2);
    for (const auto& [id, logprob] : top) EXPECT_FLOAT_EQ(logprob, logprob_of(logits, id));

    const auto all = top_logprobs(logits, 100);
    ASSERT_EQ(all.size(), logits.size()) << "n is clamped to the vocabulary";
    double total = 0.0;
    for (const auto& [id, logprob] : all) total += std::exp(logprob);
    EXPECT_NEAR(total, 1.0, 1e-6);
    EXPECT_TRUE(top_logprobs(logits, 0).empty());
    EXPECT_TRUE(top_logprobs(logits, -4).empty());
}

}  // namespace
}  // namespace ladder::engine
