// The counter-based generator behind every draw: Philox4x64-10 against the
// known-answer vectors Random123 publishes (kat_vectors), and draws that
// depend on (seed, position, purpose) alone.
#include "ladder/engine/position_random.h"

#include <gtest/gtest.h>

#include <set>

namespace ladder::engine {
namespace {

using Words = std::array<uint64_t, 4>;

TEST(Philox, matches_random123_known_answers) {
    EXPECT_EQ(philox4x64_10({0, 0, 0, 0}, {0, 0}),
              (Words{0x16554d9eca36314cull, 0xdb20fe9d672d0fdcull, 0xd7e772cee186176bull,
                     0x7e68b68aec7ba23bull}));
    // The digits of pi, Random123's second vector.
    EXPECT_EQ(philox4x64_10({0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                             0x082efa98ec4e6c89ull},
                            {0x452821e638d01377ull, 0xbe5466cf34e90c6cull}),
              (Words{0xa528f45403e61d95ull, 0x38c72dbd566e9788ull, 0xa5a1610e72fd18b5ull,
                     0x57bd43b5e52b7fe6ull}));
    // numpy.random.Philox's first output with key 0 (its counter starts at 1).
    EXPECT_EQ(philox4x64_10({1, 0, 0, 0}, {0, 0})[0], 0x02f4ba6408e4d89bull);
}

TEST(PositionUniform, is_a_function_of_seed_position_and_purpose_alone) {
    // Pinned: the top 53 bits of the first word for counter (position,
    // purpose, 0, 0) under key (seed, 0), computed by an independent Python
    // implementation of Philox4x64-10.
    EXPECT_DOUBLE_EQ(position_uniform(42, 0, DrawPurpose::Sample), 0.653938184773127);
    EXPECT_DOUBLE_EQ(position_uniform(42, 1, DrawPurpose::Sample), 0.8201981478608876);
    EXPECT_DOUBLE_EQ(position_uniform(42, 7, DrawPurpose::DraftAcceptance), 0.004214379957862335);
    EXPECT_DOUBLE_EQ(position_uniform(42, 7, DrawPurpose::Residual), 0.5262616779775545);
    EXPECT_DOUBLE_EQ(position_uniform(42, 7, DrawPurpose::DraftProposal), 0.22165610245600031);
    // Asking again, or in another order, changes nothing.
    EXPECT_EQ(position_uniform(42, 1, DrawPurpose::Sample),
              position_uniform(42, 1, DrawPurpose::Sample));
}

TEST(PositionUniform, draws_are_in_the_unit_interval_and_do_not_repeat) {
    std::set<double> seen;
    for (int64_t position = 0; position < 2000; ++position) {
        for (uint64_t seed : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}}) {
            const double u = position_uniform(seed, position, DrawPurpose::Sample);
            ASSERT_GE(u, 0.0);
            ASSERT_LT(u, 1.0);
            seen.insert(u);
        }
    }
    EXPECT_EQ(seen.size(), 6000u) << "distinct (seed, position) pairs gave the same number";
}

}  // namespace
}  // namespace ladder::engine
