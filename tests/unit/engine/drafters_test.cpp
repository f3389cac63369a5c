// The drafters' lookups on token lists: prompt lookup (n-gram) and the
// suffix index shared by requests (what it proposes, its bounds, forgetting),
// kept apart per cache salt (tenant).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../tokenizer/synthetic_vocabularies.h"
#include "ladder/engine/ngram_drafter.h"
#include "ladder/engine/suffix_drafter.h"
#include "ladder/engine/suffix_index.h"
#include "ladder/engine/tenant_suffix_index.h"

namespace ladder::engine {
namespace {

std::vector<TokenId> continuation_of(const std::vector<TokenId>& tokens, int32_t min_n,
                                     int32_t max_n, int32_t max_tokens) {
    std::vector<TokenId> draft;
    propose_continuation(tokens, find_ngram_continuation(tokens, min_n, max_n), max_tokens, draft);
    return draft;
}

TEST(NgramLookup, proposes_what_followed_the_latest_earlier_match) {
    // "1 2 3" occurs twice before the end; the later one is followed by 7 8.
    const std::vector<TokenId> tokens = {1, 2, 3, 4, 5, 1, 2, 3, 7, 8, 9, 1, 2, 3};
    EXPECT_EQ(continuation_of(tokens, 2, 3, 3), (std::vector<TokenId>{7, 8, 9}));
    EXPECT_EQ(continuation_of(tokens, 2, 3, 1), (std::vector<TokenId>{7}));
}

TEST(NgramLookup, prefers_the_longest_n_gram) {
    // The last 2 tokens (5 6) last occurred followed by 0; the last 3 (4 5 6)
    // only earlier, followed by 9: the longer match wins.
    const std::vector<TokenId> tokens = {4, 5, 6, 9, 5, 6, 0, 4, 5, 6};
    EXPECT_EQ(continuation_of(tokens, 2, 3, 1), (std::vector<TokenId>{9}));
    EXPECT_EQ(continuation_of(tokens, 2, 2, 1), (std::vector<TokenId>{0}));
}

TEST(NgramLookup, finds_nothing_below_the_minimum_length) {
    const std::vector<TokenId> tokens = {1, 2, 3, 9, 3};
    EXPECT_TRUE(continuation_of(tokens, 2, 4, 5).empty());
    EXPECT_EQ(continuation_of(tokens, 1, 4, 5), (std::vector<TokenId>{9, 3}));
    EXPECT_TRUE(continuation_of({7}, 1, 4, 5).empty());
    EXPECT_TRUE(continuation_of({}, 1, 4, 5).empty());
}

TEST(NgramLookup, a_continuation_may_run_into_the_pattern_itself) {
    // A repeating text: the match one period back continues with the period.
    const std::vector<TokenId> tokens = {5, 6, 5, 6, 5, 6};
    EXPECT_EQ(continuation_of(tokens, 2, 2, 8), (std::vector<TokenId>{5, 6}));
}

TEST(SuffixIndex, proposes_the_most_frequent_continuation) {
    SuffixIndex index(8, 100, 10000);
    index.insert(std::vector<TokenId>{1, 2, 3, 4, 5});
    index.insert(std::vector<TokenId>{1, 2, 3, 4, 5});
    index.insert(std::vector<TokenId>{1, 2, 3, 9, 9});
    const std::vector<TokenId> context = {7, 1, 2, 3};
    const SuffixProposal p = index.propose(context, 8, 4.0, 0.0);
    EXPECT_EQ(p.n_matched, 3);
    EXPECT_EQ(p.tokens, (std::vector<TokenId>{4, 5}));
    // 4 followed "1 2 3" two times in three; 5 always followed "1 2 3 4".
    EXPECT_NEAR(p.score, 2.0 / 3.0 + 2.0 / 3.0, 1e-12);
}

TEST(SuffixIndex, stops_below_the_minimum_probability_and_at_the_bounds) {
    SuffixIndex index(8, 100, 10000);
    index.insert(std::vector<TokenId>{1, 2, 3, 4, 5, 6});
    index.insert(std::vector<TokenId>{1, 2, 3, 8});
    const std::vector<TokenId> context = {1, 2, 3};
    EXPECT_TRUE(index.propose(context, 8, 4.0, 0.6).tokens.empty()) << "4 follows half the time";
    EXPECT_EQ(index.propose(context, 8, 4.0, 0.5).tokens, (std::vector<TokenId>{4, 5, 6}));
    EXPECT_EQ(index.propose(context, 2, 4.0, 0.0).tokens, (std::vector<TokenId>{4, 5}));
    // max_spec_factor 1: no more tokens than were matched.
    const std::vector<TokenId> short_context = {3};
    EXPECT_EQ(index.propose(short_context, 8, 1.0, 0.0).tokens.size(), 1u);
    // The depth bounds match plus proposal: the full match "1 2 3" leaves
    // room for one token, the match "3" for three, which are expected to
    // bring more accepted tokens.
    SuffixIndex shallow(4, 100, 10000);
    shallow.insert(std::vector<TokenId>{1, 2, 3, 4, 5, 6});
    const SuffixProposal deep = shallow.propose(context, 8, 4.0, 0.0);
    EXPECT_EQ(deep.tokens, (std::vector<TokenId>{4, 5, 6}));
    EXPECT_EQ(deep.n_matched, 1);
    EXPECT_EQ(shallow.propose(context, 1, 4.0, 0.0).n_matched, 3)
        << "the longer match among equals";
}

TEST(SuffixIndex, finds_nothing_it_was_not_given) {
    SuffixIndex index(8, 100, 10000);
    EXPECT_TRUE(index.propose(std::vector<TokenId>{1, 2}, 8, 4.0, 0.0).tokens.empty());
    index.insert(std::vector<TokenId>{1, 2, 3});
    EXPECT_TRUE(index.propose(std::vector<TokenId>{5, 6}, 8, 4.0, 0.0).tokens.empty());
}

TEST(SuffixIndex, forgets_the_oldest_past_its_bounds_and_frees_every_node) {
    SuffixIndex index(4, 2, 10000);
    index.insert(std::vector<TokenId>{1, 2, 3, 4});
    const int64_t one = index.n_nodes();
    index.insert(std::vector<TokenId>{5, 6, 7, 8});
    index.insert(std::vector<TokenId>{9, 10, 11, 12});
    EXPECT_EQ(index.n_sequences(), 2);
    EXPECT_TRUE(index.propose(std::vector<TokenId>{1, 2}, 4, 4.0, 0.0).tokens.empty())
        << "the oldest sequence is still proposed";
    EXPECT_EQ(index.propose(std::vector<TokenId>{9, 10}, 4, 4.0, 0.0).tokens,
              (std::vector<TokenId>{11, 12}));
    // Distinct tokens: every sequence of four adds the same number of nodes.
    EXPECT_EQ(index.n_nodes(), 2 * one);

    // A node bound: sequences are forgotten until the nodes fit.
    SuffixIndex bounded(4, 1000, 3 * one);
    for (TokenId base = 0; base < 100; base += 10) {
        bounded.insert(std::vector<TokenId>{base, base + 1, base + 2, base + 3});
        EXPECT_LE(bounded.n_nodes(), 3 * one);
    }
    EXPECT_EQ(bounded.n_sequences(), 3);
}

TEST(SuffixIndex, shared_substrings_are_counted_not_duplicated) {
    SuffixIndex index(4, 100, 10000);
    index.insert(std::vector<TokenId>{1, 2, 3});
    const int64_t nodes = index.n_nodes();
    index.insert(std::vector<TokenId>{1, 2, 3});
    EXPECT_EQ(index.n_nodes(), nodes);
    SuffixIndex one_sequence(4, 1, 10000);
    one_sequence.insert(std::vector<TokenId>{1, 2, 3});
    one_sequence.insert(std::vector<TokenId>{1, 2, 3});
    EXPECT_EQ(one_sequence.n_nodes(), nodes) << "forgetting one copy removed shared nodes";
    EXPECT_EQ(one_sequence.propose(std::vector<TokenId>{1}, 4, 4.0, 0.0).tokens,
              (std::vector<TokenId>{2, 3}));
}

TEST(TenantSuffixIndex, a_salt_finds_only_its_own_sequences) {
    TenantSuffixIndex index(8, 100, 10000);
    index.insert("tenant-a", std::vector<TokenId>{1, 2, 3, 4});
    EXPECT_EQ(index.find("tenant-b"), nullptr) << "tenant B sees tenant A's sequences";
    EXPECT_EQ(index.find(""), nullptr) << "the unsalted index holds a salted sequence";
    const SuffixIndex* own = index.find("tenant-a");
    ASSERT_NE(own, nullptr);
    EXPECT_EQ(own->propose(std::vector<TokenId>{1, 2}, 4, 4.0, 0.0).tokens,
              (std::vector<TokenId>{3, 4}));
}

TEST(TenantSuffixIndex, forgets_the_oldest_of_all_salts_under_one_bound) {
    TenantSuffixIndex index(4, 2, 10000);
    index.insert("a", std::vector<TokenId>{1, 2, 3, 4});
    index.insert("b", std::vector<TokenId>{5, 6, 7, 8});
    const int64_t two = index.n_nodes();
    index.insert("a", std::vector<TokenId>{9, 10, 11, 12});
    EXPECT_EQ(index.n_sequences(), 2);
    EXPECT_EQ(index.n_nodes(), two) << "distinct tokens: each sequence adds as many nodes";
    ASSERT_NE(index.find("a"), nullptr);
    EXPECT_TRUE(index.find("a")->propose(std::vector<TokenId>{1, 2}, 4, 4.0, 0.0).tokens.empty())
        << "the oldest sequence of all was kept";
    ASSERT_NE(index.find("b"), nullptr) << "a younger tenant's sequence was forgotten";

    // A salt whose last sequence is forgotten leaves no index behind.
    index.insert("c", std::vector<TokenId>{13, 14, 15, 16});
    EXPECT_EQ(index.find("b"), nullptr);
    EXPECT_EQ(index.n_salts(), 2);

    // A node bound one tenant fills alone: its index forgets its own oldest,
    // and the shared count follows.
    TenantSuffixIndex bounded(4, 1000, two);
    for (TokenId base = 0; base < 100; base += 10) {
        bounded.insert(base < 50 ? "a" : "b",
                       std::vector<TokenId>{base, base + 1, base + 2, base + 3});
        EXPECT_LE(bounded.n_nodes(), two);
    }
    EXPECT_EQ(bounded.n_sequences(), 2);
    EXPECT_EQ(bounded.n_salts(), 1);
}

const tokenizer::Tokenizer& tiny_tokenizer() {
    static const std::unique_ptr<tokenizer::Tokenizer> tokenizer =
        tokenizer::Tokenizer::create(tokenizer::testing::tiny_bpe("gpt-2", {}));
    return *tokenizer;
}

std::unique_ptr<Sequence> salted_sequence(std::vector<TokenId> tokens, std::string salt) {
    RequestParams params;
    params.prompt = std::move(tokens);
    params.cache_salt = std::move(salt);
    return std::make_unique<Sequence>(RequestId{1}, std::move(params), 100, 16, tiny_tokenizer());
}

std::vector<TokenId> suffix_draft(SuffixDrafter& drafter, Sequence& sequence) {
    sequence.draft.clear();
    const DraftRequest request{&sequence, 8};
    drafter.propose(std::span<const DraftRequest>(&request, 1));
    return sequence.draft.tokens;
}

TEST(SuffixDrafter, drafts_from_earlier_requests_of_the_same_salt_only) {
    SpeculativeConfig config;
    config.method = SpeculativeMethod::Suffix;
    config.suffix_max_spec_factor = 4.0;
    SuffixDrafter drafter(config);
    // Tenant A's finished request: its prompt and output join A's index.
    const auto finished = salted_sequence({1, 2, 3, 4, 5, 6, 7, 8, 9}, "tenant-a");
    drafter.on_released(*finished, true);

    // The same context for tenant B (no repeat of its own to look up) and A.
    const std::vector<TokenId> context = {1, 2, 3};
    const auto other = salted_sequence(context, "tenant-b");
    EXPECT_TRUE(suffix_draft(drafter, *other).empty()) << "tenant A's output drafted for tenant B";
    const auto unsalted = salted_sequence(context, "");
    EXPECT_TRUE(suffix_draft(drafter, *unsalted).empty())
        << "tenant A's output drafted for an unsalted request";
    const auto same = salted_sequence(context, "tenant-a");
    EXPECT_EQ(suffix_draft(drafter, *same), (std::vector<TokenId>{4, 5, 6, 7, 8, 9}))
        << "a tenant's own earlier request no longer drafts for it";

    // A preempted sequence's tokens are not final: they join no index.
    const auto preempted = salted_sequence({20, 21, 22, 23}, "tenant-b");
    drafter.on_released(*preempted, false);
    EXPECT_EQ(drafter.index().find("tenant-b"), nullptr);
}

}  // namespace
}  // namespace ladder::engine
