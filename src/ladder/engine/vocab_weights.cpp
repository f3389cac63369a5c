#include "ladder/engine/vocab_weights.h"

#include <algorithm>

namespace ladder::engine {

namespace {

// Eight running sums over weights[begin, end), combined pairwise.
double chunk_sum(std::span<const float> weights, size_t begin, size_t end) {
    constexpr size_t kLanes = 8;
    double lanes[kLanes] = {};
    size_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
        for (size_t k = 0; k < kLanes; ++k) lanes[k] += weights[i + k];
    }
    for (size_t k = 0; i < end; ++i, ++k) lanes[k] += weights[i];
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
           ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// The last index in [begin, end) with a positive weight; `end` if none.
size_t last_weighted(std::span<const float> weights, size_t begin, size_t end) {
    for (size_t i = end; i-- > begin;) {
        if (weights[i] > 0.0f) return i;
    }
    return end;
}

}  // namespace

double WeightSums::assign(std::span<const float> weights) {
    const size_t n_chunks = (weights.size() + kChunk - 1) / kChunk;
    chunk_sums_.resize(n_chunks);
    total_ = 0.0;
    for (size_t c = 0; c < n_chunks; ++c) {
        const size_t begin = c * kChunk;
        chunk_sums_[c] = chunk_sum(weights, begin, std::min(weights.size(), begin + kChunk));
        total_ += chunk_sums_[c];
    }
    return total_;
}

size_t WeightSums::find(std::span<const float> weights, double target) const {
    double before = 0.0;  // the sum of the chunks passed
    for (size_t c = 0; c < chunk_sums_.size(); ++c) {
        const double after = before + chunk_sums_[c];
        if (target < after) {
            const size_t begin = c * kChunk;
            const size_t end = std::min(weights.size(), begin + kChunk);
            double running = before;
            for (size_t i = begin; i < end; ++i) {
                running += weights[i];
                if (target < running) return i;
            }
            return last_weighted(weights, begin, end);
        }
        before = after;
    }
    const size_t last = last_weighted(weights, 0, weights.size());
    return last == weights.size() ? 0 : last;
}

}  // namespace ladder::engine
