// SeededRandom's prepared ranges must give the very numbers between(low,
// high) gives: the synthetic prompts (and so every simulated report) are
// fixed by the seed.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ladder/tools/seeded_random.h"

namespace ladder::tools {
namespace seeded_random_test {

TEST(DrawRange, RemainderIsTheDivisionsForEdgeDraws) {
    const std::vector<uint64_t> spans = {1,
                                         2,
                                         3,
                                         7,
                                         29000,
                                         65536,
                                         1000003,
                                         (1ULL << 32) + 1,
                                         1ULL << 63,
                                         (1ULL << 63) + 1,
                                         UINT64_MAX - 1,
                                         UINT64_MAX};
    std::mt19937_64 engine(5);
    for (const uint64_t span : spans) {
        // span = high - low + 1, from the lowest low (C++20's conversions wrap).
        const DrawRange range(INT64_MIN,
                              static_cast<int64_t>(static_cast<uint64_t>(INT64_MIN) + span - 1));
        ASSERT_EQ(range.span, span);
        std::vector<uint64_t> draws = {0,
                                       1,
                                       span - 1,
                                       span,
                                       span + 1,
                                       UINT64_MAX,
                                       UINT64_MAX - 1,
                                       UINT64_MAX - UINT64_MAX % span,
                                       range.limit - 1};
        for (uint64_t k = 1; k < 5; ++k) {
            draws.push_back(span * k);
            draws.push_back(span * k - 1);
        }
        for (int i = 0; i < 10000; ++i) draws.push_back(engine());
        for (const uint64_t draw : draws) {
            ASSERT_EQ(range.remainder(draw), draw % span) << "draw " << draw << ", span " << span;
        }
    }
}

TEST(DrawRange, DrawsAreBetweensForTheSameSeed) {
    struct Bounds {
        int64_t low;
        int64_t high;
    };
    // bench's token ids and words, one value, small and huge spans.
    const std::vector<Bounds> ranges = {{1000, 29999}, {0, 2047},      {4, 4},
                                        {-3, 3},       {0, INT64_MAX}, {INT64_MIN / 3, 12345}};
    for (const Bounds& bounds : ranges) {
        SeededRandom plain(17);
        SeededRandom prepared(17);
        const DrawRange range(bounds.low, bounds.high);
        for (int i = 0; i < 20000; ++i) {
            const int64_t expected = plain.between(bounds.low, bounds.high);
            ASSERT_EQ(prepared.between(range), expected)
                << "draw " << i << " of [" << bounds.low << ", " << bounds.high << "]";
        }
        // The streams are still in step after the prepared draws.
        EXPECT_EQ(prepared.unit(), plain.unit());
    }
}

}  // namespace seeded_random_test
}  // namespace ladder::tools
