// Verification of drafted tokens on synthetic logits over a small
// vocabulary: point-mass drafts accepted while the target's own sample
// agrees (so the output is plain sampling's, token for token), and
// rejection sampling whose output follows the target's distribution exactly
// whatever the draft's (a chi-square test against p).
#include "ladder/engine/verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "../tokenizer/synthetic_vocabularies.h"
#include "chi_square.h"
#include "ladder/engine/position_sampling.h"

namespace ladder::engine {
namespace verifier_test {

using testing::chi_square;

const tokenizer::Tokenizer& tiny_tokenizer() {
    static const std::unique_ptr<tokenizer::Tokenizer> tokenizer =
        tokenizer::Tokenizer::create(tokenizer::testing::tiny_bpe("gpt-2", {}));
    return *tokenizer;
}

constexpr size_t kVocab = 260;

std::unique_ptr<Sequence> make_sequence(SamplingParams sampling, std::vector<TokenId> prompt = {5, 6, 7}) {
    RequestParams params;
    params.prompt = std::move(prompt);
    params.sampling = sampling;
    return std::make_unique<Sequence>(RequestId{1}, std::move(params), 100, 16, tiny_tokenizer());
}

// A row whose softmax is the given probabilities on the first tokens.
std::vector<float> row_of(const std::vector<double>& probabilities) {
    std::vector<float> row(kVocab, -INFINITY);
    for (size_t i = 0; i < probabilities.size(); ++i) {
        row[i] = probabilities[i] > 0.0 ? static_cast<float>(std::log(probabilities[i])) : -INFINITY;
    }
    return row;
}

std::vector<float> argmax_row(TokenId id) {
    std::vector<float> row(kVocab, 0.0f);
    row[static_cast<size_t>(id)] = 5.0f;
    return row;
}

std::vector<float> rows(const std::vector<std::vector<float>>& each) {
    std::vector<float> all;
    for (const auto& row : each) all.insert(all.end(), row.begin(), row.end());
    return all;
}

SamplingParams greedy() {
    SamplingParams p;
    p.temperature = 0.0f;
    return p;
}

TEST(Verifier, greedy_accepts_drafts_while_the_argmax_agrees_then_corrects) {
    auto sequence = make_sequence(greedy());
    sequence->draft.tokens = {10, 11, 12};
    std::vector<float> logits = rows({argmax_row(10), argmax_row(11), argmax_row(40), argmax_row(50)});
    verify_step(*sequence, logits, kVocab);
    EXPECT_EQ(sequence->new_tokens, (std::vector<TokenId>{10, 11, 40}));
    EXPECT_EQ(sequence->n_accepted_drafts, 2);
    EXPECT_EQ(sequence->tokens, (std::vector<TokenId>{5, 6, 7})) << "tokens must be left as they were";
}

TEST(Verifier, every_draft_accepted_earns_a_bonus_token) {
    auto sequence = make_sequence(greedy());
    sequence->draft.tokens = {10, 11};
    std::vector<float> logits = rows({argmax_row(10), argmax_row(11), argmax_row(99)});
    verify_step(*sequence, logits, kVocab);
    EXPECT_EQ(sequence->new_tokens, (std::vector<TokenId>{10, 11, 99}));
    EXPECT_EQ(sequence->n_accepted_drafts, 2);
}

TEST(Verifier, without_drafts_it_is_plain_sampling) {
    auto sequence = make_sequence(greedy());
    std::vector<float> logits = argmax_row(42);
    verify_step(*sequence, logits, kVocab);
    EXPECT_EQ(sequence->new_tokens, (std::vector<TokenId>{42}));
    EXPECT_EQ(sequence->n_accepted_drafts, 0);
}

// Sampled, point-mass drafts: the new tokens are the ones sampling position
// after position would give, whatever was drafted (the draw at a position is
// keyed by the position).
TEST(Verifier, sampled_point_mass_drafts_give_plain_sampling_tokens) {
    SamplingParams sampled;
    sampled.temperature = 0.9f;
    sampled.top_k = 6;
    sampled.repetition_penalty = 1.3f;
    const std::vector<float> row = row_of({0.3, 0.25, 0.2, 0.15, 0.1});
    for (uint64_t seed = 0; seed < 200; ++seed) {
        sampled.seed = seed;
        // Plain decoding, position by position.
        auto plain = make_sequence(sampled);
        std::vector<TokenId> expected;
        for (int i = 0; i < 4; ++i) {
            std::vector<float> copy = row;
            const TokenId token = sample_next_token(*plain, copy);
            expected.push_back(token);
            plain->tokens.push_back(token);
        }
        // Drafts: the first two of those tokens, then a wrong one.
        auto speculative = make_sequence(sampled);
        speculative->draft.tokens = {expected[0], expected[1], static_cast<TokenId>(expected[2] == 4 ? 3 : 4), 0};
        std::vector<float> logits = rows({row, row, row, row, row});
        verify_step(*speculative, logits, kVocab);
        ASSERT_GE(speculative->new_tokens.size(), 3u);
        for (size_t i = 0; i < speculative->new_tokens.size(); ++i) {
            EXPECT_EQ(speculative->new_tokens[i], expected[i]) << "seed " << seed << " position " << i;
        }
    }
}

// Rejection sampling with a draft distribution q: the token at the drafted
// position must follow the target's p exactly; q only changes how often the
// draft is taken (sum of min(p, q)).
TEST(Verifier, rejection_sampling_follows_the_target_distribution) {
    const std::vector<double> p = {0.5, 0.2, 0.15, 0.1, 0.05, 0.0};
    const std::vector<double> q = {0.1, 0.4, 0.0, 0.2, 0.1, 0.2};  // mass where p has none, too
    std::vector<TokenProbability> q_by_id;
    for (size_t i = 0; i < q.size(); ++i) {
        if (q[i] > 0.0) q_by_id.push_back({static_cast<TokenId>(i), q[i]});
    }
    SamplingParams sampled;  // temperature 1: p is the softmax of the row
    const int n = 20000;
    std::vector<double> counts(p.size(), 0.0);
    int n_accepted = 0;
    for (int trial = 0; trial < n; ++trial) {
        sampled.seed = static_cast<uint64_t>(trial);
        auto sequence = make_sequence(sampled);
        // The draft's own draw from q, with its own stream.
        const TokenId draft = draw_from(
            q_by_id, sequence->sampler.uniform(sequence->n_tokens(), DrawPurpose::DraftProposal));
        sequence->draft.tokens = {draft};
        sequence->draft.distributions = {q_by_id};
        std::vector<float> logits = rows({row_of(p), row_of(p)});
        verify_step(*sequence, logits, kVocab);
        ASSERT_FALSE(sequence->new_tokens.empty());
        ++counts[static_cast<size_t>(sequence->new_tokens[0])];
        n_accepted += sequence->n_accepted_drafts;
    }
    std::vector<double> expected;
    for (double probability : p) expected.push_back(probability * n);
    const testing::ChiSquare test = chi_square(counts, expected);
    EXPECT_GT(test.p_value, 0.01) << "chi-square " << test.statistic << " on "
                                  << test.degrees_of_freedom << " degrees of freedom";
    EXPECT_EQ(counts[5], 0.0) << "a token the target gives no probability was produced";
    double overlap = 0.0;
    for (size_t i = 0; i < p.size(); ++i) overlap += std::min(p[i], q[i]);
    EXPECT_NEAR(static_cast<double>(n_accepted) / n, overlap, 0.015);
}

TEST(ChiSquareHelper, matches_tabulated_critical_values) {
    // The 5% critical values of chi-square with 1, 4 and 10 degrees of freedom.
    EXPECT_NEAR(testing::upper_regularized_gamma(0.5, 3.841 / 2.0), 0.05, 1e-3);
    EXPECT_NEAR(testing::upper_regularized_gamma(2.0, 9.488 / 2.0), 0.05, 1e-3);
    EXPECT_NEAR(testing::upper_regularized_gamma(5.0, 18.307 / 2.0), 0.05, 1e-3);
    EXPECT_NEAR(testing::upper_regularized_gamma(1.0, 2.0), std::exp(-2.0), 1e-12);
}

// Allows even tokens only, and records what it accepted.
class EvenTokens final : public TokenConstraint {
public:
    explicit EvenTokens(std::vector<TokenId>* accepted) : accepted_(accepted) {}
    void apply_mask(std::span<float> logits) override {
        for (size_t i = 1; i < logits.size(); i += 2) logits[i] = -INFINITY;
    }
    bool accept(TokenId token) override {
        if (token % 2 != 0) return false;
        accepted_->push_back(token);
        return true;
    }
    void rollback(int32_t n) override { accepted_->resize(accepted_->size() - static_cast<size_t>(n)); }
    bool is_terminated() const override { return false; }

private:
    std::vector<TokenId>* accepted_;
};

TEST(Verifier, the_constraint_masks_every_drafted_position) {
    std::vector<TokenId> accepted;
    RequestParams params;
    params.prompt = {5, 6, 7};
    params.sampling = greedy();
    params.make_constraint = [&accepted] { return std::make_unique<EvenTokens>(&accepted); };
    Sequence sequence(RequestId{1}, std::move(params), 100, 16, tiny_tokenizer());
    // The model prefers 10, then 13 (odd: masked, so 12 is the best allowed).
    std::vector<float> second = argmax_row(13);
    second[12] = 4.0f;
    sequence.draft.tokens = {10, 13};
    std::vector<float> logits = rows({argmax_row(10), second, argmax_row(20)});
    verify_step(sequence, logits, kVocab);
    EXPECT_EQ(sequence.new_tokens, (std::vector<TokenId>{10, 12}));
    EXPECT_EQ(accepted, (std::vector<TokenId>{10, 12})) << "the constraint saw other tokens";
}

}  // namespace verifier_test
}  // namespace ladder::engine
