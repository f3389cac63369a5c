// Random numbers that are the same for a seed on every platform: std::
// mt19937_64's output is fixed by the standard, its distributions are not,
// so the few this tool needs are written out here.
#pragma once

#include <cstdint>
#include <random>

namespace ladder::tools {

class SeededRandom {
public:
    explicit SeededRandom(uint64_t seed) : engine_(seed) {}

    // Uniform in [0, 1), 53 random bits.
    double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
    // Uniform in [low, high], both included; low <= high.
    int64_t between(int64_t low, int64_t high) {
        const auto span = static_cast<uint64_t>(high - low) + 1;
        // Rejection keeps it unbiased; a span of 2^64 (never asked) wraps to 0.
        const uint64_t limit = span == 0 ? 0 : UINT64_MAX - UINT64_MAX % span;
        uint64_t draw = engine_();
        while (span != 0 && draw >= limit) draw = engine_();
        return low + static_cast<int64_t>(span == 0 ? draw : draw % span);
    }

private:
    std::mt19937_64 engine_;
};

}  // namespace ladder::tools
