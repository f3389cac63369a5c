// The sampler's passes over a whole vocabulary: the largest logit, the
// weights exp(logit - max) and the running sums a draw walks. Gemma 3 has
// 262,144 logits, and with libm's expf, a serial max and one running sum these
// passes cost 1.6 ms a token at temperature 1 (2.4 ms with top-p 0.9;
// sampler_bench), against a decode step of about 12.5 ms on two cores. Written so that GCC
// vectorizes them with the baseline x86-64 instruction set (no -march), and so that every machine
// and standard library gets the same bits: exp is a fixed polynomial, not libm's, and every sum
// runs in a fixed order.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ladder::engine {

// e^x for x <= 0; 0 below -87 (where e^x leaves the normal floats) and for
// -inf. Cody and Waite's reduction x = n ln 2 + r, |r| <= ln 2 / 2, then
// Cephes' degree-7 polynomial for e^r (relative error about 1e-7) scaled by
// 2^n through the exponent bits. Round-to-nearest of x / ln 2 by adding
// 1.5 * 2^23, which leaves n in the low bits. Only IEEE adds, multiplies and
// bit moves (no fused multiply-add: the ISO C++ build does not contract), so
// any vector width gives the scalar bits. The clamp is on the bits, as an
// integer compare and mask: GCC will not turn a float compare into a select
// while it must keep floating-point traps, and the loop would stay scalar.
inline float exp_nonpositive(float x) {
    constexpr float kLog2e = 1.44269504088896341f;
    constexpr float kRoundingShift = 12582912.0f;  // 1.5 * 2^23
    constexpr float kLn2High = 0.693359375f;       // few bits, so n * it is exact
    constexpr float kLn2Low = -2.12194440e-4f;
    // -87 as bits: a float at or below 0 is below it when its bits, unsigned, are above.
    constexpr uint32_t kSmallestBits = 0xc2ae0000u;
    const auto bits = std::bit_cast<uint32_t>(x);
    const uint32_t too_small = 0u - static_cast<uint32_t>(bits > kSmallestBits);
    const auto clamped = std::bit_cast<float>((bits & ~too_small) | (kSmallestBits & too_small));
    const float shifted = clamped * kLog2e + kRoundingShift;
    const float n = shifted - kRoundingShift;
    const int32_t n_bits = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRoundingShift);
    const float r = (clamped - n * kLn2High) - n * kLn2Low;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float e_r = p * (r * r) + r + 1.0f;
    const auto two_to_n = std::bit_cast<float>((n_bits + 127) << 23);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(e_r * two_to_n) & ~too_small);
}

// The largest of value(item) over items (-inf when empty). Eight running
// maxima, where one would wait on each compare in turn; the result is the
// same whatever the order (NaN aside, which callers have mapped to -inf).
template <typename T, typename Value>
float max_value(std::span<const T> items, Value value) {
    constexpr size_t kLanes = 8;
    float lanes[kLanes];
    for (float& lane : lanes) lane = -std::numeric_limits<float>::infinity();
    const size_t n_whole = items.size() / kLanes * kLanes;
    for (size_t i = 0; i < n_whole; i += kLanes) {
        for (size_t k = 0; k < kLanes; ++k) {
            const float v = value(items[i + k]);
            lanes[k] = lanes[k] < v ? v : lanes[k];
        }
    }
    for (size_t i = n_whole; i < items.size(); ++i) {
        const float v = value(items[i]);
        lanes[0] = lanes[0] < v ? v : lanes[0];
    }
    float best = lanes[0];
    for (size_t k = 1; k < kLanes; ++k) best = best < lanes[k] ? lanes[k] : best;
    return best;
}

// weights[i] = exp_nonpositive((value(items[i]) - max) / temperature), the
// pass that costs most: with AVX2 where the CPU has it (twice the lanes of the
// baseline's SSE2), chosen by a CPUID test rather than an ifunc, which
// ThreadSanitizer under clang cannot start. AVX2 alone enables no fused
// multiply-add, so both forms give the same bits. `value` should be a lambda:
// a function pointer would stay a call per item in the AVX2 form.
namespace detail {

template <typename T, typename Value>
[[gnu::always_inline]] inline void exp_weights_loop(std::span<const T> items, Value value,
                                                    float max, float temperature, float* weights) {
    for (size_t i = 0; i < items.size(); ++i) {
        weights[i] = exp_nonpositive((value(items[i]) - max) / temperature);
    }
}

template <typename T, typename Value>
[[gnu::target("avx2")]] void exp_weights_avx2(std::span<const T> items, Value value, float max,
                                              float temperature, float* weights) {
    exp_weights_loop(items, value, max, temperature, weights);
}

}  // namespace detail

template <typename T, typename Value>
void exp_weights(std::span<const T> items, Value value, float max, float temperature,
                 float* weights) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) {
        detail::exp_weights_avx2(items, value, max, temperature, weights);
    } else {
        detail::exp_weights_loop(items, value, max, temperature, weights);
    }
}

// The running sums of a list of weights, kept by chunk, so that a draw finds
// where the sum passes its target in a few thousand steps instead of walking
// half the vocabulary one dependent add at a time. A chunk sums its weights
// in eight running sums (in double), combined pairwise; the total is the
// chunks' sums in order.
class WeightSums {
public:
    static constexpr size_t kChunk = 256;

    // Takes the sums of `weights` (each >= 0) and returns their total.
    double assign(std::span<const float> weights);
    double total() const { return total_; }

    // The first index at which the running sum, chunk by chunk and then
    // weight by weight in the chunk, passes `target` (0 <= target < total).
    // Where rounding leaves the walk in a chunk short of it, the chunk's last
    // index with weight; where it leaves every chunk short, the last index
    // with weight overall. `weights` must be the list given to assign().
    size_t find(std::span<const float> weights, double target) const;

private:
    std::vector<double> chunk_sums_;
    double total_ = 0.0;
};

}  // namespace ladder::engine
