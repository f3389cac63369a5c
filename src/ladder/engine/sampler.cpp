// The sampler chain and log-probabilities. Every step that reorders or drops
// candidates leaves them in an order fixed by (logit, id) alone, so a seeded
// draw walks the same sequence on every standard library (given libm's exp).
#include "ladder/engine/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "ladder/util/check.h"

namespace ladder::engine {
namespace {

constexpr float kNever = -std::numeric_limits<float>::infinity();

// A NaN logit (a model bug) would break the sorts' ordering: it ranks last.
// Tested on the bits (exponent all ones, mantissa not zero), so that the
// loop over a vocabulary vectorizes (vocab_weights.h says why).
float sortable(float logit) {
    constexpr uint32_t kInfinityBits = 0x7f800000u;
    const auto bits = std::bit_cast<uint32_t>(logit);
    const uint32_t nan = 0u - static_cast<uint32_t>((bits & 0x7fffffffu) > kInfinityBits);
    return std::bit_cast<float>((bits & ~nan) | (std::bit_cast<uint32_t>(kNever) & nan));
}

// Higher logit first; the lower id breaks ties, which makes every sort a total order.
template <typename T>
bool ranks_before(const T& a, const T& b) {
    if (a.logit != b.logit) return a.logit > b.logit;
    return a.id < b.id;
}

// ranks_before as a comparison object, so that the sorts inline it (given as
// a function pointer, every compare of a top-k over 262k logits was a call).
struct RanksBefore {
    template <typename T>
    bool operator()(const T& a, const T& b) const {
        return ranks_before(a, b);
    }
};

// Ignores NaN; the lowest id wins ties (and id 0 when every logit is NaN).
// The largest first, then the first index holding it: two passes that
// vectorize, where one with a running best waits on every compare.
TokenId argmax(std::span<const float> logits) {
    const float best = max_value(logits, [](float l) { return l; });
    const auto first = std::find(logits.begin(), logits.end(), best);
    return first == logits.end() ? 0 : static_cast<TokenId>(first - logits.begin());
}

// log(sum(exp(logits))), accumulated in double; NaN logits left out.
double log_sum_exp(std::span<const float> logits) {
    const float max_logit = max_value(logits, [](float l) { return l; });
    if (!std::isfinite(max_logit)) return max_logit;
    double sum = 0.0;
    for (float l : logits) {
        if (!std::isnan(l)) sum += exp_nonpositive(l - max_logit);
    }
    return max_logit + std::log(sum);
}

uint64_t seed_of(const SamplingParams& params) {
    if (params.seed) return *params.seed;
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), seed_(0) {
    validate(params_);
    seed_ = seed_of(params_);
}

void Sampler::apply_penalties(std::span<float> logits, std::span<const TokenId> history) {
    const bool neutral = params_.repetition_penalty == 1.0f && params_.frequency_penalty == 0.0f &&
                         params_.presence_penalty == 0.0f;
    if (neutral || params_.penalty_last_n == 0 || history.empty()) return;
    std::size_t n = history.size();
    if (params_.penalty_last_n > 0) {
        n = std::min(n, static_cast<std::size_t>(params_.penalty_last_n));
    }
    window_.assign(history.end() - static_cast<std::ptrdiff_t>(n), history.end());
    std::sort(window_.begin(), window_.end());
    for (std::size_t i = 0; i < window_.size();) {
        const TokenId id = window_[i];
        std::size_t count = 0;
        while (i < window_.size() && window_[i] == id) {
            ++i;
            ++count;
        }
        LADDER_CHECK(id >= 0 && static_cast<std::size_t>(id) < logits.size(),
                     "token id in the history outside the vocabulary");
        float& logit = logits[static_cast<std::size_t>(id)];
        // Dividing a negative logit would raise its probability, so it is multiplied.
        logit =
            logit > 0.0f ? logit / params_.repetition_penalty : logit * params_.repetition_penalty;
        logit -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
    }
}

std::optional<TokenId> Sampler::shape(std::span<float> logits,
                                      std::span<const TokenId> history) {
    LADDER_CHECK(!logits.empty(), "sampling from an empty vocabulary");
    apply_penalties(logits, history);
    if (params_.temperature == 0.0f) return argmax(logits);

    candidates_.resize(logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i) {
        candidates_[i] = {static_cast<TokenId>(i), sortable(logits[i])};
    }
    if (params_.top_k > 0 && static_cast<std::size_t>(params_.top_k) < candidates_.size()) {
        const auto k = static_cast<std::ptrdiff_t>(params_.top_k);
        std::partial_sort(candidates_.begin(), candidates_.begin() + k, candidates_.end(),
                          RanksBefore{});
        candidates_.resize(static_cast<std::size_t>(k));
    }
    if (params_.top_p < 1.0f) keep_top_p();
    if (params_.min_p > 0.0f) keep_min_p();
    LADDER_CHECK(!candidates_.empty(), "every candidate token was filtered out");
    return std::nullopt;
}

TokenId Sampler::sample(std::span<float> logits, std::span<const TokenId> history,
                        int64_t position) {
    if (const std::optional<TokenId> greedy = shape(logits, history)) return *greedy;
    return draw(uniform(position, DrawPurpose::Sample));
}

std::span<const TokenProbability> Sampler::distribution(std::span<float> logits,
                                                        std::span<const TokenId> history) {
    distribution_.clear();
    if (const std::optional<TokenId> greedy = shape(logits, history)) {
        distribution_.push_back({*greedy, 1.0});
        return distribution_;
    }
    const double total = weigh_candidates();
    if (!(total > 0.0) || !std::isfinite(total)) {
        // Nothing has any weight (every logit -inf): draw() takes the first.
        distribution_.push_back({candidates_.front().id, 1.0});
        return distribution_;
    }
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
        distribution_.push_back({candidates_[i].id, static_cast<double>(weights_[i]) / total});
    }
    return distribution_;
}

float Sampler::max_candidate_logit() const {
    return max_value(std::span<const Candidate>(candidates_), logit_of);
}

// Keeps the candidates ranked at or above the cutoff: the token at which the
// probability mass, taken in rank order, first reaches top_p. Sorting a 50k
// vocabulary for a wide nucleus costs milliseconds, so a histogram of the
// logits finds the bucket the cutoff lies in, and only that bucket is searched.
void Sampler::keep_top_p() {
    const float max_logit = max_candidate_logit();
    if (!std::isfinite(max_logit)) return;
    // Buckets 1/kBucketsPerUnit of a logit wide, below the top logit; the last
    // one takes everything further down (weights there are below e^-32).
    constexpr float kBucketsPerUnit = 32.0f;
    constexpr int32_t kBuckets = 1024;
    fill_weights(max_logit, 1.0f);  // top-p comes before the temperature
    const size_t n = candidates_.size();
    buckets_.resize(n);
    // The offsets are >= 0, where floats order as their bits do: clamped as
    // integers, which GCC vectorizes (exp_nonpositive says why).
    const auto last_bucket_bits = std::bit_cast<int32_t>(static_cast<float>(kBuckets - 1));
    for (size_t i = 0; i < n; ++i) {
        const auto offset_bits =
            std::bit_cast<int32_t>((max_logit - candidates_[i].logit) * kBucketsPerUnit);
        buckets_[i] = static_cast<int32_t>(
            std::bit_cast<float>(offset_bits < last_bucket_bits ? offset_bits : last_bucket_bits));
    }
    // Four histograms, candidate i adding to copy i % 4: neighbours often
    // share a bucket, and with one histogram each add would wait for the
    // store of the one before.
    constexpr size_t kCopies = 4;
    bucket_mass_.assign(kCopies * kBuckets, 0.0);
    for (size_t i = 0; i < n; ++i) {
        bucket_mass_[(i % kCopies) * kBuckets + static_cast<size_t>(buckets_[i])] += weights_[i];
    }
    double total = 0.0;
    for (size_t b = 0; b < kBuckets; ++b) {
        const double* copies = &bucket_mass_[b];
        bucket_mass_[b] =
            (copies[0] + copies[kBuckets]) + (copies[2 * kBuckets] + copies[3 * kBuckets]);
        total += bucket_mass_[b];
    }
    const double target = static_cast<double>(params_.top_p) * total;
    int32_t cut_bucket = 0;
    double mass_above = 0.0;
    while (cut_bucket + 1 < kBuckets && mass_above + bucket_mass_[cut_bucket] < target) {
        mass_above += bucket_mass_[cut_bucket++];
    }
    const int32_t* buckets = buckets_.data();
    selection_.clear();
    for (size_t i = 0; i < n; ++i) {
        if (buckets[i] == cut_bucket) selection_.push_back({candidates_[i], weights_[i]});
    }
    const Candidate cutoff = find_top_p_cutoff(target - mass_above);
    // Kept above the cut bucket by arithmetic, not a branch: in a wide
    // nucleus the two outcomes mix, and mispredictions took most of the loop.
    // The cut bucket itself is rare, so its branch predicts.
    std::size_t n_kept = 0;
    for (size_t i = 0; i < n; ++i) {
        const Candidate c = candidates_[i];
        candidates_[n_kept] = c;
        bool keep = buckets[i] < cut_bucket;
        if (buckets[i] == cut_bucket) keep = !ranks_before(cutoff, c);
        n_kept += static_cast<size_t>(keep);
    }
    candidates_.resize(n_kept);
}

// Quickselect by mass instead of by count, over selection_. Hand-written
// partitioning keeps the summation order, hence the result at a rounding
// boundary, the same on every standard library.
Sampler::Candidate Sampler::find_top_p_cutoff(double target) {
    std::size_t lo = 0;
    std::size_t hi = selection_.size();
    double mass_above = 0.0;  // of the candidates known to rank before [lo, hi)
    while (hi - lo > 1) {
        // Median of three by rank as the pivot, moved to the end of the range.
        auto before = [](const Weighted& a, const Weighted& b) {
            return ranks_before(a.candidate, b.candidate);
        };
        auto order = [&](std::size_t first, std::size_t second) {
            if (before(selection_[second], selection_[first])) {
                std::swap(selection_[first], selection_[second]);
            }
        };
        const std::size_t mid = lo + (hi - lo) / 2;
        order(lo, mid);
        order(lo, hi - 1);
        order(hi - 1, mid);
        const Weighted pivot = selection_[hi - 1];
        std::size_t n_before = lo;
        double mass_before = 0.0;
        for (std::size_t i = lo; i + 1 < hi; ++i) {
            if (before(selection_[i], pivot)) {
                mass_before += selection_[i].weight;
                std::swap(selection_[i], selection_[n_before++]);
            }
        }
        std::swap(selection_[n_before], selection_[hi - 1]);  // the pivot between the parts
        if (mass_above + mass_before >= target) {
            hi = n_before;  // the cutoff ranks before the pivot
        } else if (mass_above + mass_before + pivot.weight >= target) {
            return pivot.candidate;
        } else {
            mass_above += mass_before + pivot.weight;
            lo = n_before + 1;
        }
    }
    // One candidate left, or none when rounding kept the mass short of target
    // to the very end: then everything stays.
    if (hi > lo) return selection_[lo].candidate;
    return {std::numeric_limits<TokenId>::max(), kNever};
}

// min-p compares probabilities to the top one's, which on logits is a fixed
// offset from the top logit (as llama.cpp computes it).
void Sampler::keep_min_p() {
    const float max_logit = max_candidate_logit();
    if (!std::isfinite(max_logit)) return;
    const float threshold = max_logit + std::log(params_.min_p);
    // A stable filter: the survivors keep their (deterministic) order.
    std::size_t n_kept = 0;
    for (const Candidate& c : candidates_) {
        if (c.logit >= threshold) candidates_[n_kept++] = c;
    }
    candidates_.resize(n_kept);
}

void Sampler::fill_weights(float max_logit, float temperature) {
    weights_.resize(candidates_.size());
    if (!std::isfinite(max_logit)) {
        std::fill(weights_.begin(), weights_.end(), 0.0f);
        return;
    }
    // Shifted by the top logit before the temperature divides (which leaves
    // the softmax unchanged), so that a tiny temperature cannot overflow.
    exp_weights(std::span<const Candidate>(candidates_), logit_of, max_logit, temperature,
                weights_.data());
}

double Sampler::weigh_candidates() {
    fill_weights(max_candidate_logit(), params_.temperature);
    return weight_sums_.assign(weights_);
}

TokenId Sampler::draw(double uniform) {
    const double total = weigh_candidates();
    if (!(total > 0.0)) return candidates_.front().id;
    return candidates_[weight_sums_.find(weights_, uniform * total)].id;
}

TokenId draw_from(std::span<const TokenProbability> distribution, double uniform) {
    LADDER_CHECK(!distribution.empty(), "a draw from an empty distribution");
    double total = 0.0;
    for (const TokenProbability& t : distribution) total += t.probability;
    const double target = uniform * total;
    double cumulative = 0.0;
    for (const TokenProbability& t : distribution) {
        cumulative += t.probability;
        if (target < cumulative) return t.id;
    }
    for (std::size_t i = distribution.size(); i-- > 0;) {
        if (distribution[i].probability > 0.0) return distribution[i].id;
    }
    return distribution.back().id;
}

float logprob_of(std::span<const float> logits, TokenId id) {
    LADDER_CHECK(id >= 0 && static_cast<std::size_t>(id) < logits.size(),
                 "logprob of a token outside the vocabulary");
    return static_cast<float>(logits[static_cast<std::size_t>(id)] - log_sum_exp(logits));
}

std::vector<std::pair<TokenId, float>> top_logprobs(std::span<const float> logits, int n) {
    const std::size_t count = std::min(logits.size(), static_cast<std::size_t>(std::max(n, 0)));
    if (count == 0) return {};
    struct Entry {
        TokenId id;
        float logit;
    };
    std::vector<Entry> entries(logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i) {
        entries[i] = {static_cast<TokenId>(i), sortable(logits[i])};
    }
    std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(count),
                      entries.end(), RanksBefore{});
    const double lse = log_sum_exp(logits);
    std::vector<std::pair<TokenId, float>> result;
    result.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        result.emplace_back(entries[i].id, static_cast<float>(entries[i].logit - lse));
    }
    return result;
}

}  // namespace ladder::engine
