// Random numbers that are the same for a seed on every platform: std::
// mt19937_64's output is fixed by the standard, its distributions are not,
// so the few this tool needs are written out here.
#pragma once

#include <cstdint>
#include <random>

namespace ladder::tools {

// [low, high] prepared for many draws (SeededRandom::between(range)): the
// rejection limit and the span's reciprocal are computed once, so a draw
// takes a multiplication where between(low, high) divides by the span.
struct DrawRange {
    DrawRange(int64_t low, int64_t high)
        : low(low),
          span(static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1),
          limit(span == 0 ? 0 : UINT64_MAX - UINT64_MAX % span),
          reciprocal(span == 0 ? 0 : UINT64_MAX / span) {}

    // draw % span, exactly: reciprocal <= 2^64 / span, so the estimated
    // quotient is the true one or one short, and one subtraction corrects it.
    uint64_t remainder(uint64_t draw) const {
        const auto quotient =
            static_cast<uint64_t>((static_cast<unsigned __int128>(draw) * reciprocal) >> 64);
        const uint64_t rest = draw - quotient * span;
        return rest >= span ? rest - span : rest;
    }

    int64_t low;
    uint64_t span;  // high - low + 1; 0 stands for 2^64
    uint64_t limit;
    uint64_t reciprocal;
};

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
    // The same number between(range.low, high) would give, for the same state.
    int64_t between(const DrawRange& range) {
        uint64_t draw = engine_();
        while (range.span != 0 && draw >= range.limit) draw = engine_();
        return range.low + static_cast<int64_t>(range.span == 0 ? draw : range.remainder(draw));
    }

private:
    std::mt19937_64 engine_;
};

}  // namespace ladder::tools
