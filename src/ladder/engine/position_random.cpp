#include "ladder/engine/position_random.h"

namespace ladder::engine {

namespace {

// The multipliers and Weyl key increments of Philox4x64 (Random123).
constexpr uint64_t kMultiplier0 = 0xD2E7470EE14C6C93ull;
constexpr uint64_t kMultiplier1 = 0xCA5A826395121157ull;
constexpr uint64_t kWeyl0 = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kWeyl1 = 0xBB67AE8584CAA73Bull;
constexpr int kRounds = 10;

struct HighLow {
    uint64_t high;
    uint64_t low;
};

HighLow multiply(uint64_t a, uint64_t b) {
    const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
    return {static_cast<uint64_t>(product >> 64), static_cast<uint64_t>(product)};
}

}  // namespace

std::array<uint64_t, 4> philox4x64_10(std::array<uint64_t, 4> counter,
                                      std::array<uint64_t, 2> key) {
    for (int round = 0; round < kRounds; ++round) {
        if (round > 0) {
            key[0] += kWeyl0;
            key[1] += kWeyl1;
        }
        const HighLow a = multiply(kMultiplier0, counter[0]);
        const HighLow b = multiply(kMultiplier1, counter[2]);
        counter = {b.high ^ counter[1] ^ key[0], b.low, a.high ^ counter[3] ^ key[1], a.low};
    }
    return counter;
}

double position_uniform(uint64_t seed, int64_t position, DrawPurpose purpose) {
    const std::array<uint64_t, 4> out = philox4x64_10(
        {static_cast<uint64_t>(position), static_cast<uint64_t>(purpose), 0, 0}, {seed, 0});
    return static_cast<double>(out[0] >> 11) * 0x1.0p-53;
}

}  // namespace ladder::engine
