// attend_head: the scalar reference against attention computed in double, and
// every fast path against the scalar reference bit for bit, over paged layouts
// (block sizes that do and do not divide 8), sliding windows and GQA heads.
#include "ladder/kernels/cpu/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/tensor/half.h"
#include "paged_cache.h"

namespace ladder::kernels::cpu {
namespace attention_test {

using testing::PagedCache;
using testing::random_query;

std::vector<Isa> fast_isas() {
    std::vector<Isa> isas;
    for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
        if (isa_supported(isa, cpu_features())) isas.push_back(isa);
    }
    return isas;
}

// Plain attention in double on the F16-rounded query: what the kernel
// approximates, independent of its lane orders.
std::vector<double> attention_in_double(const PagedCache& cache, const std::vector<float>& q,
                                        int32_t kv_head, int32_t first_visible, int32_t n_visible,
                                        double scale) {
    std::vector<double> scores;
    for (int32_t p = first_visible; p < n_visible; ++p) {
        const uint16_t* key = cache.row(cache.keys, kv_head, p);
        double dot = 0.0;
        for (int32_t d = 0; d < cache.head_dim; ++d) {
            const float qd = tensor::fp16_to_fp32(tensor::fp32_to_fp16(q[static_cast<size_t>(d)]));
            dot += static_cast<double>(qd) * tensor::fp16_to_fp32(key[d]);
        }
        scores.push_back(dot * scale);
    }
    const double max_score = *std::max_element(scores.begin(), scores.end());
    double sum = 0.0;
    for (auto& s : scores) sum += (s = std::exp(s - max_score));
    std::vector<double> out(static_cast<size_t>(cache.head_dim), 0.0);
    for (int32_t p = first_visible; p < n_visible; ++p) {
        const uint16_t* value = cache.row(cache.values, kv_head, p);
        const double weight = scores[static_cast<size_t>(p - first_visible)] / sum;
        for (int32_t d = 0; d < cache.head_dim; ++d) {
            out[static_cast<size_t>(d)] += weight * tensor::fp16_to_fp32(value[d]);
        }
    }
    return out;
}

std::vector<float> run(AttendHeadFn attend, const PagedCache& cache, const std::vector<float>& q,
                       int32_t kv_head, int32_t first_visible, int32_t n_visible, float scale) {
    // Scratch and output start as NaN so a value the kernel forgot to write shows.
    std::vector<float> scores(static_cast<size_t>(n_visible), std::nanf(""));
    std::vector<float> out(static_cast<size_t>(cache.head_dim), std::nanf(""));
    attend(q.data(), cache.block_table.data(), first_visible, n_visible, cache.layer(), kv_head,
           scale, scores.data(), out.data());
    return out;
}

TEST(Attention, scalar_reference_matches_attention_in_double) {
    std::mt19937 rng(11);
    const AttendHeadFn scalar = attend_head_for(Isa::Scalar);
    for (const int32_t head_dim : {64, 128}) {
        for (const int32_t n_visible : {1, 9, 100}) {
            const PagedCache cache(rng, 2, 16, head_dim, n_visible, 1.0f);
            const auto q = random_query(rng, head_dim);
            const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
            const int32_t first_visible = n_visible / 3;
            const auto want = attention_in_double(cache, q, 1, first_visible, n_visible, scale);
            const auto got = run(scalar, cache, q, 1, first_visible, n_visible, scale);
            for (int32_t d = 0; d < head_dim; ++d) {
                // Probabilities are rounded to F16 (relative 2^-11) before they
                // weight values of magnitude ~1.
                EXPECT_NEAR(got[static_cast<size_t>(d)], want[static_cast<size_t>(d)], 2e-3)
                    << "head_dim " << head_dim << " n_visible " << n_visible << " d " << d;
            }
        }
    }
}

TEST(Attention, nothing_visible_gives_zeros_on_every_path) {
    std::mt19937 rng(12);
    const PagedCache cache(rng, 1, 16, 64, 16, 1.0f);
    const auto q = random_query(rng, 64);
    std::vector<Isa> isas = fast_isas();
    isas.push_back(Isa::Scalar);
    for (const Isa isa : isas) {
        const auto out = run(attend_head_for(isa), cache, q, 0, 5, 5, 0.125f);
        for (const float x : out) EXPECT_EQ(std::bit_cast<uint32_t>(x), 0u) << isa_name(isa);
    }
}

struct Shape {
    int32_t head_dim;
    int32_t block_size;
    int32_t n_kv_heads;
    float key_scale;  // larger keys make the softmax peaky, smaller make it flat
};

TEST(Attention, every_fast_path_matches_scalar_reference_bit_for_bit) {
    const std::vector<Isa> isas = fast_isas();
    if (isas.empty()) GTEST_SKIP() << "this CPU runs only the scalar path";
    std::mt19937 rng(13);
    const AttendHeadFn scalar = attend_head_for(Isa::Scalar);
    const std::vector<Shape> shapes = {{64, 16, 3, 1.0f}, {128, 32, 2, 0.3f}, {256, 16, 1, 3.0f},
                                       {64, 7, 2, 1.0f},  {128, 1, 1, 1.0f},  {64, 32, 1, 8.0f}};
    const std::vector<int32_t> n_visibles = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 300};
    int n_compared = 0;
    for (const Shape& shape : shapes) {
        const PagedCache cache(rng, shape.n_kv_heads, shape.block_size, shape.head_dim, 300,
                               shape.key_scale);
        const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
        for (const int32_t n_visible : n_visibles) {
            // Full causal attention, a one-position window, then sliding
            // windows starting anywhere: aligned or not to the 8-position
            // softmax groups, and at every offset within a group.
            std::vector<int32_t> starts = {0, n_visible - 1};
            const auto n_groups = static_cast<uint32_t>((n_visible + 7) / 8);
            for (int32_t offset = 1; offset < 8; ++offset) {
                const int32_t start = 8 * static_cast<int32_t>(rng() % n_groups) + offset;
                if (start < n_visible) starts.push_back(start);
            }
            for (const int32_t first_visible : starts) {
                const auto q = random_query(rng, shape.head_dim);
                const int32_t kv_head = static_cast<int32_t>(rng() % shape.n_kv_heads);
                const auto want = run(scalar, cache, q, kv_head, first_visible, n_visible, scale);
                for (const Isa isa : isas) {
                    const auto got = run(attend_head_for(isa), cache, q, kv_head, first_visible,
                                         n_visible, scale);
                    ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                        << isa_name(isa) << " differs: head_dim " << shape.head_dim
                        << " block_size " << shape.block_size << " kv_head " << kv_head
                        << " positions [" << first_visible << ", " << n_visible << ")";
                    ++n_compared;
                }
            }
        }
    }
    EXPECT_GT(n_compared, 0);
}

// Grouped-query attention: attend_heads on every path, for 1 to 6 heads
// sharing a KV head (tails of the fast path's 4-head groups, keys left over
// from its 2- and 4-key steps), gives each head the scalar attend_head's bits.
TEST(Attention, attend_heads_matches_attend_head_per_head_on_every_path) {
    std::mt19937 rng(14);
    const AttendHeadFn scalar = attend_head_for(Isa::Scalar);
    std::vector<Isa> isas = fast_isas();
    isas.push_back(Isa::Scalar);
    const std::vector<Shape> shapes = {{64, 16, 3, 1.0f}, {256, 16, 1, 3.0f}, {128, 7, 2, 0.3f}};
    int n_compared = 0;
    for (const Shape& shape : shapes) {
        const PagedCache cache(rng, shape.n_kv_heads, shape.block_size, shape.head_dim, 300,
                               shape.key_scale);
        const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
        for (const int32_t n_heads : {1, 2, 3, 4, 5, 6}) {
            for (const int32_t n_visible : {1, 2, 3, 5, 8, 9, 17, 100, 257}) {
                for (const int32_t first_visible : {0, n_visible / 3, n_visible - 1}) {
                    const int32_t kv_head = static_cast<int32_t>(rng() % shape.n_kv_heads);
                    const auto q = random_query(rng, shape.head_dim * n_heads);
                    const auto head_dim = static_cast<size_t>(shape.head_dim);
                    std::vector<float> want;
                    for (int32_t h = 0; h < n_heads; ++h) {
                        const std::vector<float> q_head(q.begin() + h * head_dim,
                                                        q.begin() + (h + 1) * head_dim);
                        const auto out =
                            run(scalar, cache, q_head, kv_head, first_visible, n_visible, scale);
                        want.insert(want.end(), out.begin(), out.end());
                    }
                    for (const Isa isa : isas) {
                        std::vector<float> scores(static_cast<size_t>(n_heads * n_visible),
                                                  std::nanf(""));
                        std::vector<float> got(want.size(), std::nanf(""));
                        attend_heads_for(isa)(q.data(), n_heads, cache.block_table.data(),
                                              first_visible, n_visible, cache.layer(), kv_head,
                                              scale, scores.data(), got.data());
                        ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)),
                                  0)
                            << isa_name(isa) << " differs: " << n_heads << " heads, head_dim "
                            << shape.head_dim << ", positions [" << first_visible << ", "
                            << n_visible << ")";
                        ++n_compared;
                    }
                }
            }
        }
    }
    EXPECT_GT(n_compared, 0);
}

// The softmax sum's grouping (8 positions aligned to position 0) reaches the
// output only when it flips a float and then an F16 rounding, which random
// attention inputs almost never do; the sum itself shows it every time.
TEST(Attention, fast_softmax_sums_match_scalar_bit_for_bit) {
    if (!isa_supported(Isa::Avx2, cpu_features())) GTEST_SKIP() << "no AVX2";
    std::mt19937 rng(14);
    std::uniform_real_distribution<float> spread(-25.0f, 0.0f);
    int n_groupings_that_matter = 0;
    for (const int32_t n_visible : {1, 5, 8, 9, 16, 23, 64, 129, 300}) {
        for (int32_t first_visible = 0; first_visible < std::min(n_visible, 20); ++first_visible) {
            std::vector<float> scores(static_cast<size_t>(n_visible - first_visible));
            for (auto& x : scores) x = spread(rng);
            const float max_score = *std::max_element(scores.begin(), scores.end());
            std::vector<float> want = scores;
            std::vector<float> got = scores;
            const double want_sum =
                detail::softmax_exp_sum_scalar(want.data(), first_visible, n_visible, max_score);
            const double got_sum =
                detail::softmax_exp_sum_avx2(got.data(), first_visible, n_visible, max_score);
            const std::string where = "positions [" + std::to_string(first_visible) + ", " +
                                      std::to_string(n_visible) + ")";
            ASSERT_EQ(std::bit_cast<uint64_t>(got_sum), std::bit_cast<uint64_t>(want_sum))
                << where << ": sum " << got_sum << " vs " << want_sum;
            ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << where;
            // Counts the cases where grouping by 8 from first_visible instead
            // would give another sum: proof that this test can see grouping.
            double regrouped = 0.0;
            for (size_t g = 0; g < want.size(); g += 8) {
                float lane[8] = {};
                for (size_t j = 0; j < 8 && g + j < want.size(); ++j) lane[j] = want[g + j];
                regrouped += static_cast<double>(((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                                                 ((lane[1] + lane[5]) + (lane[3] + lane[7])));
            }
            n_groupings_that_matter += regrouped != want_sum;
        }
    }
    EXPECT_GT(n_groupings_that_matter, 10);
}

// Cuts [begin, end) at random multiples of `step` into up to four pieces.
std::vector<IndexRange> random_pieces(std::mt19937& rng, int32_t begin, int32_t end, int32_t step) {
    std::vector<int32_t> cuts = {begin, end};
    for (int i = 0; i < 3; ++i) {
        const int32_t cut =
            static_cast<int32_t>(rng() % static_cast<uint32_t>(end + 1)) / step * step;
        if (cut > begin && cut < end) cuts.push_back(cut);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<IndexRange> pieces;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) pieces.push_back({cuts[i], cuts[i + 1]});
    std::shuffle(pieces.begin(), pieces.end(), rng);  // any order, as threads take them
    return pieces;
}

// The split steps, with the positions and the dimensions cut at random and
// the pieces run in any order, give attend_heads' bits on every path that has
// them.
TEST(Attention, split_steps_give_attend_heads_bits_however_they_are_cut) {
    std::mt19937 rng(21);
    const std::vector<Shape> shapes = {{64, 16, 3, 1.0f}, {256, 16, 1, 3.0f}, {128, 7, 2, 0.3f}};
    int n_compared = 0;
    for (const Isa isa : fast_isas()) {
        const SplitAttentionKernels* split = split_attention_for(isa);
        ASSERT_NE(split, nullptr) << isa_name(isa);
        for (const Shape& shape : shapes) {
            const PagedCache cache(rng, shape.n_kv_heads, shape.block_size, shape.head_dim, 600,
                                   shape.key_scale);
            const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
            for (const int32_t n_heads : {1, 2, 3, 4, 5, 6}) {
                for (const int32_t n_visible : {1, 9, 100, 257, 600}) {
                    for (const int32_t first_visible : {0, n_visible / 3, n_visible - 1}) {
                        const int32_t kv_head = static_cast<int32_t>(rng() % shape.n_kv_heads);
                        const auto q = random_query(rng, shape.head_dim * n_heads);
                        const int32_t n_scores = n_visible - first_visible;
                        const auto rows = static_cast<size_t>(n_heads * n_scores);
                        const auto dims = static_cast<size_t>(n_heads * shape.head_dim);
                        std::vector<float> scores(rows, std::nanf(""));
                        std::vector<float> want(dims, std::nanf(""));
                        attend_heads_for(isa)(q.data(), n_heads, cache.block_table.data(),
                                              first_visible, n_visible, cache.layer(), kv_head,
                                              scale, scores.data(), want.data());

                        std::vector<float> got(dims, std::nanf(""));
                        std::vector<float> max(static_cast<size_t>(n_heads), -INFINITY);
                        const auto n_groups =
                            static_cast<size_t>(softmax_group_count(first_visible, n_visible));
                        std::vector<float> group_sums(n_groups * n_heads, std::nanf(""));
                        std::vector<float> probabilities(rows, std::nanf(""));
                        std::fill(scores.begin(), scores.end(), std::nanf(""));
                        const auto pieces = random_pieces(rng, first_visible, n_visible, 8);
                        for (const IndexRange piece : pieces) {
                            std::vector<float> piece_max(static_cast<size_t>(n_heads));
                            split->score(q.data(), n_heads, cache.block_table.data(), first_visible,
                                         n_visible, piece, cache.layer(), kv_head, scale,
                                         scores.data(), piece_max.data());
                            for (size_t h = 0; h < max.size(); ++h) {
                                max[h] = max[h] < piece_max[h] ? piece_max[h] : max[h];
                            }
                        }
                        for (const IndexRange piece : pieces) {
                            split->exponentiate(scores.data(), n_heads, first_visible, n_visible,
                                                piece, max.data(), group_sums.data());
                        }
                        for (const IndexRange piece : random_pieces(rng, 0, shape.head_dim, 16)) {
                            split->weigh(scores.data(), n_heads, group_sums.data(),
                                         cache.block_table.data(), first_visible, n_visible,
                                         cache.layer(), kv_head, piece, probabilities.data(),
                                         got.data());
                        }
                        ASSERT_EQ(std::memcmp(got.data(), want.data(), dims * sizeof(float)), 0)
                            << isa_name(isa) << " split differs: " << n_heads << " heads, head_dim "
                            << shape.head_dim << ", positions [" << first_visible << ", "
                            << n_visible << ")";
                        ++n_compared;
                    }
                }
            }
        }
    }
    if (fast_isas().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    EXPECT_GT(n_compared, 0);
    EXPECT_EQ(split_attention_for(Isa::Scalar), nullptr);
}

}  // namespace attention_test
}  // namespace ladder::kernels::cpu
