// The chunked attention kernels (--attention fast): every path against
// attention computed in double over contexts of 1 to 8,192 positions (ragged
// last chunks), 1 to 6 query heads per KV head, sliding windows and paged
// layouts; the avx2 path against the scalar reference bit for bit; every
// path giving the same bits however its rows are tiled and its chunks split
// (what makes decode, prefill and any batch or thread count agree); and the
// BF16 path on a BF16 cache's tiles giving its bits on F16 rows.
#include "ladder/kernels/cpu/chunked_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ladder/kernels/cpu/kv_tiles.h"
#include "paged_cache.h"

namespace ladder::kernels::cpu {
namespace chunked_attention_test {

using testing::PagedCache;

// n_tokens new tokens at the end of a context of n_context positions, each
// with n_heads query heads of one KV head.
struct Case {
    int32_t head_dim;
    int32_t n_heads;
    int32_t n_context;
    int32_t n_tokens;
    int32_t window;  // 0: full causal attention
    int32_t block_size = 16;
    int32_t n_kv_heads = 2;
    float key_scale = 1.0f;

    std::string describe() const {
        return "head_dim " + std::to_string(head_dim) + ", " + std::to_string(n_heads) +
               " heads, context " + std::to_string(n_context) + ", " + std::to_string(n_tokens) +
               " tokens, window " + std::to_string(window) + ", block " +
               std::to_string(block_size);
    }
};

struct Queries {
    std::vector<float> q;  // [n_tokens][n_heads][head_dim]
    std::vector<int32_t> first_visible;
    std::vector<int32_t> end_visible;
};

Queries make_queries(std::mt19937& rng, const Case& c) {
    Queries out;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    out.q.resize(static_cast<size_t>(c.n_tokens) * c.n_heads * c.head_dim);
    for (auto& x : out.q) x = normal(rng);
    for (int32_t t = 0; t < c.n_tokens; ++t) {
        const int32_t position = c.n_context - c.n_tokens + t;
        out.first_visible.push_back(c.window > 0 ? std::max(0, position - c.window + 1) : 0);
        out.end_visible.push_back(position + 1);
    }
    return out;
}

AttentionTile tile_of(const Case& c, Queries& queries, std::vector<float>& out, int32_t t0,
                      int32_t n_tokens) {
    const int64_t stride = int64_t{c.n_heads} * c.head_dim;
    return {queries.q.data() + t0 * stride, out.data() + t0 * stride, stride, n_tokens, c.n_heads,
            queries.first_visible.data() + t0, queries.end_visible.data() + t0};
}

std::vector<float> scratch_for(const Case& c) {
    // NaN, so a value a kernel reads before writing it shows.
    return std::vector<float>(chunked_attention_scratch_floats(c.head_dim), std::nanf(""));
}

// The tokens in tiles of tokens_per_tile, each tile's chunks in n_pieces
// pieces (1: merged as they come; more: partials, then merged).
std::vector<float> attend(const ChunkedAttentionKernels& kernels, const Case& c,
                          const PagedKvLayer& kv, const std::vector<int32_t>& block_table,
                          Queries& queries, int32_t kv_head, float scale, int32_t tokens_per_tile,
                          int32_t n_pieces) {
    std::vector<float> out(queries.q.size(), std::nanf(""));
    std::vector<float> scratch = scratch_for(c);
    for (int32_t t0 = 0; t0 < c.n_tokens; t0 += tokens_per_tile) {
        const AttentionTile tile =
            tile_of(c, queries, out, t0, std::min(tokens_per_tile, c.n_tokens - t0));
        const int32_t first = tile.first_chunk();
        const int32_t n_chunks = tile.end_chunk() - first;
        if (n_pieces == 1) {
            kernels.attend(tile, kv, kv_head, block_table.data(), scale, first, first + n_chunks,
                           nullptr, scratch.data());
            continue;
        }
        const auto rows = static_cast<size_t>(tile.n_rows());
        std::vector<float> o(static_cast<size_t>(n_chunks) * rows * c.head_dim, std::nanf(""));
        std::vector<float> max(static_cast<size_t>(n_chunks) * rows, std::nanf(""));
        std::vector<float> sum(static_cast<size_t>(n_chunks) * rows, std::nanf(""));
        for (int32_t p = 0; p < n_pieces; ++p) {
            const int32_t begin = n_chunks * p / n_pieces;
            const int32_t end = n_chunks * (p + 1) / n_pieces;
            const auto skip = static_cast<size_t>(begin);
            const ChunkPartials partials{o.data() + skip * rows * c.head_dim,
                                         max.data() + skip * rows, sum.data() + skip * rows};
            kernels.attend(tile, kv, kv_head, block_table.data(), scale, first + begin, first + end,
                           &partials, scratch.data());
        }
        kernels.merge(tile, c.head_dim, {o.data(), max.data(), sum.data()}, n_chunks,
                      scratch.data());
    }
    return out;
}

std::vector<float> attend(const ChunkedAttentionKernels& kernels, const Case& c,
                          const PagedCache& cache, Queries& queries, int32_t kv_head, float scale,
                          int32_t tokens_per_tile, int32_t n_pieces) {
    return attend(kernels, c, cache.layer(), cache.block_table, queries, kv_head, scale,
                  tokens_per_tile, n_pieces);
}

// Plain softmax attention in double on the unrounded inputs.
std::vector<double> attention_in_double(const Case& c, const PagedCache& cache,
                                        const Queries& queries, int32_t kv_head, double scale) {
    std::vector<double> out;
    for (int32_t t = 0; t < c.n_tokens; ++t) {
        for (int32_t h = 0; h < c.n_heads; ++h) {
            const float* q = queries.q.data() + (int64_t{t} * c.n_heads + h) * c.head_dim;
            std::vector<double> scores;
            for (int32_t p = queries.first_visible[t]; p < queries.end_visible[t]; ++p) {
                const uint16_t* key = cache.row(cache.keys, kv_head, p);
                double dot = 0.0;
                for (int32_t d = 0; d < c.head_dim; ++d) {
                    dot += static_cast<double>(q[d]) * tensor::fp16_to_fp32(key[d]);
                }
                scores.push_back(dot * scale);
            }
            const double max_score = *std::max_element(scores.begin(), scores.end());
            double sum = 0.0;
            for (auto& s : scores) sum += (s = std::exp(s - max_score));
            std::vector<double> row(static_cast<size_t>(c.head_dim), 0.0);
            for (int32_t p = queries.first_visible[t]; p < queries.end_visible[t]; ++p) {
                const uint16_t* value = cache.row(cache.values, kv_head, p);
                const double weight = scores[static_cast<size_t>(p - queries.first_visible[t])];
                for (int32_t d = 0; d < c.head_dim; ++d) {
                    row[static_cast<size_t>(d)] += weight / sum * tensor::fp16_to_fp32(value[d]);
                }
            }
            out.insert(out.end(), row.begin(), row.end());
        }
    }
    return out;
}

// The path of that name, if this CPU runs it; nullptr otherwise.
const ChunkedAttentionKernels* supported_path(std::string_view name) {
    for (const ChunkedAttentionKernels* kernels : supported_chunked_attention()) {
        if (kernels->name == name) return kernels;
    }
    return nullptr;
}

std::vector<Case> accuracy_cases() {
    std::vector<Case> cases;
    // Contexts around chunk edges and long ones, decode (1 token) and a
    // prefill chunk's worth of tokens at the end.
    for (const int32_t n_context : {1, 2, 31, 127, 128, 129, 255, 1000, 4097, 8192}) {
        const int32_t n_tokens = std::min(n_context, n_context > 1000 ? 3 : 40);
        cases.push_back({64, 3, n_context, n_tokens, 0});
        cases.push_back({64, 3, n_context, 1, 0});
    }
    for (const int32_t n_heads : {1, 2, 4, 5, 6}) cases.push_back({128, n_heads, 300, 17, 0});
    cases.push_back({256, 4, 1500, 9, 512, 16, 1, 1.0f});  // Gemma 3's local layers
    cases.push_back({256, 4, 2049, 1, 0, 16, 1, 0.3f});
    cases.push_back({32, 2, 700, 33, 100, 7, 3, 3.0f});  // a block size that divides nothing
    cases.push_back({64, 6, 400, 20, 37, 1, 1, 1.0f});
    cases.push_back({128, 3, 8192, 2, 4000, 32, 2, 1.0f});
    return cases;
}

// Worst error over a case's outputs, relative to the largest value magnitude (~4).
double worst_error(const std::vector<float>& got, const std::vector<double>& want) {
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
    }
    return worst;
}

TEST(ChunkedAttention, every_path_matches_attention_in_double) {
    std::mt19937 rng(21);
    for (const Case& c : accuracy_cases()) {
        const PagedCache cache(rng, c.n_kv_heads, c.block_size, c.head_dim, c.n_context,
                               c.key_scale);
        Queries queries = make_queries(rng, c);
        const int32_t kv_head = static_cast<int32_t>(rng() % static_cast<uint32_t>(c.n_kv_heads));
        const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
        const std::vector<double> want = attention_in_double(c, cache, queries, kv_head, scale);
        for (const ChunkedAttentionKernels* kernels : supported_chunked_attention()) {
            const std::vector<float> got =
                attend(*kernels, c, cache, queries, kv_head, static_cast<float>(scale), 8, 1);
            // F32 products and sums: a few ulps of outputs up to ~4 (seen: 1e-6).
            // BF16 rounds q, k, v and the probabilities to 8 bits (relative
            // 2^-9 each): one position's value alone is off by up to 4 x 2^-9,
            // and peaky softmaxes over few dimensions add score errors (seen:
            // 1.6e-2 with 32 dimensions and keys 3x larger).
            const bool bf16 = kernels->name == "avx512-bf16";
            const double tolerance = bf16 ? 3e-2 : 2e-6;
            EXPECT_LE(worst_error(got, want), tolerance) << kernels->name << ": " << c.describe();
        }
    }
}

TEST(ChunkedAttention, avx2_matches_scalar_reference_bit_for_bit) {
    const ChunkedAttentionKernels* avx2 = supported_path("avx2");
    if (avx2 == nullptr) GTEST_SKIP() << "no AVX2";
    std::mt19937 rng(22);
    for (const Case& c : accuracy_cases()) {
        const PagedCache cache(rng, c.n_kv_heads, c.block_size, c.head_dim, c.n_context,
                               c.key_scale);
        Queries queries = make_queries(rng, c);
        const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
        const auto want = attend(*supported_path("scalar"), c, cache, queries, 0, scale, 8, 1);
        const auto got = attend(*avx2, c, cache, queries, 0, scale, 8, 1);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
            << c.describe();
    }
}

// A row's bits depend on its query and the positions it sees, not on which
// rows share its tile or how its chunks are split: one tile for all tokens
// (prefill), a tile per token (decode), tiles of 5, and chunks split into 2
// to 7 pieces (threads of a decode step) all agree.
TEST(ChunkedAttention, tiles_and_chunk_splits_do_not_change_a_bit) {
    std::mt19937 rng(23);
    const std::vector<Case> cases = {{64, 3, 1000, 32, 0},      {64, 3, 300, 24, 100},
                                     {256, 4, 900, 24, 512, 16, 1}, {128, 1, 129, 96, 0},
                                     {32, 6, 520, 16, 0, 7, 1}};
    for (const Case& c : cases) {
        const PagedCache cache(rng, c.n_kv_heads, c.block_size, c.head_dim, c.n_context,
                               c.key_scale);
        Queries queries = make_queries(rng, c);
        const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
        for (const ChunkedAttentionKernels* kernels : supported_chunked_attention()) {
            const int32_t whole = std::max(1, kMaxTileRows / c.n_heads);
            const auto want = attend(*kernels, c, cache, queries, 1 % c.n_kv_heads, scale, whole, 1);
            struct Split {
                int32_t tokens_per_tile;
                int32_t n_pieces;
            };
            for (const Split split : {Split{1, 1}, Split{5, 1}, Split{1, 2}, Split{1, 3},
                                      Split{1, 7}, Split{whole, 4}, Split{3, 5}}) {
                const auto got = attend(*kernels, c, cache, queries, 1 % c.n_kv_heads, scale,
                                        split.tokens_per_tile, split.n_pieces);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                    << kernels->name << ": " << c.describe() << ", tiles of "
                    << split.tokens_per_tile << " tokens, " << split.n_pieces << " pieces";
            }
        }
    }
}

TEST(ChunkedAttention, rows_that_see_nothing_get_zeros) {
    std::mt19937 rng(24);
    const Case c{64, 2, 200, 2, 0};
    const PagedCache cache(rng, c.n_kv_heads, c.block_size, c.head_dim, c.n_context, 1.0f);
    Queries queries = make_queries(rng, c);
    queries.first_visible = {150, 150};
    queries.end_visible = {150, 199};  // token 0 sees nothing
    for (const ChunkedAttentionKernels* kernels : supported_chunked_attention()) {
        for (const int32_t n_pieces : {1, 2}) {
            const auto out = attend(*kernels, c, cache, queries, 0, 0.125f, 2, n_pieces);
            for (int32_t i = 0; i < c.n_heads * c.head_dim; ++i) {
                ASSERT_EQ(out[static_cast<size_t>(i)], 0.0f) << kernels->name << " element " << i;
            }
            for (size_t i = static_cast<size_t>(c.n_heads * c.head_dim); i < out.size(); ++i) {
                ASSERT_TRUE(std::isfinite(out[i])) << kernels->name;
            }
        }
    }
}

// The same random K and V, each value a BF16 that F16 holds exactly too,
// stored through store_kv into an F16 cache (rows) and a BF16 one (the
// kernel's tiles, kv_tiles.h), the blocks in shuffled order. Every slot
// nobody writes holds `fill` (two bytes of it).
struct TwinCaches {
    int32_t n_kv_heads;
    int32_t block_size;
    int32_t head_dim;
    std::vector<int32_t> block_table;
    std::vector<uint16_t> f16_keys, f16_values, bf16_keys, bf16_values;

    TwinCaches(std::mt19937& rng, const Case& c, uint16_t fill)
        : n_kv_heads(c.n_kv_heads), block_size(c.block_size), head_dim(c.head_dim) {
        const int32_t n_blocks = (c.n_context + block_size - 1) / block_size;
        const int32_t n_pool_blocks = n_blocks + 2;
        const auto n_elements =
            static_cast<size_t>(n_pool_blocks) * n_kv_heads * block_size * head_dim;
        for (auto* pool : {&f16_keys, &f16_values, &bf16_keys, &bf16_values}) {
            pool->assign(n_elements, fill);
        }
        block_table = testing::shuffled_block_table(rng, n_blocks, n_pool_blocks);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> k(static_cast<size_t>(n_kv_heads) * head_dim);
        std::vector<float> v(k.size());
        // A BF16 value F16 holds exactly: F16's subnormals (below 2^-14)
        // are coarser than BF16's steps there, so those become 0.
        const auto as_bf16 = [](float x) {
            const float rounded = tensor::bf16_to_fp32(tensor::fp32_to_bf16(x));
            return std::abs(rounded) < 0x1p-14f ? 0.0f : rounded;
        };
        for (int32_t p = 0; p < c.n_context; ++p) {
            for (auto& x : k) x = as_bf16(normal(rng) * c.key_scale);
            for (auto& x : v) x = as_bf16(normal(rng));
            const int64_t slot =
                int64_t{block_table[static_cast<size_t>(p / block_size)]} * block_size +
                p % block_size;
            store_kv(k.data(), v.data(), slot, f16_keys.data(), f16_values.data(),
                     layer(tensor::DType::F16));
            store_kv(k.data(), v.data(), slot, bf16_keys.data(), bf16_values.data(),
                     layer(tensor::DType::BF16));
        }
    }

    PagedKvLayer layer(tensor::DType type) const {
        const bool f16 = type == tensor::DType::F16;
        return {f16 ? f16_keys.data() : bf16_keys.data(),
                f16 ? f16_values.data() : bf16_values.data(),
                n_kv_heads,
                block_size,
                head_dim,
                type,
                type};
    }
};

// The BF16 path reads a BF16 cache's tiles in place and gives, bit for bit,
// what it gives converting F16 rows of the same values, over decode and
// prefill tiles, chunk splits, windows (odd first positions) and ragged ends;
// slots the window does not reach may hold anything, NaN included.
TEST(ChunkedAttention, bf16_path_reads_tiles_as_it_converts_f16_rows) {
    const ChunkedAttentionKernels* bf16 = supported_path("avx512-bf16");
    if (bf16 == nullptr) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
    std::mt19937 rng(25);
    const std::vector<Case> cases = {{64, 3, 1, 1, 0},
                                     {64, 3, 2, 2, 0},
                                     {64, 3, 31, 31, 0},
                                     {64, 3, 127, 40, 0},
                                     {64, 3, 129, 1, 0},
                                     {64, 3, 1000, 32, 0},
                                     {64, 3, 4097, 3, 0},
                                     {64, 3, 4097, 1, 0},
                                     {128, 1, 129, 96, 0},
                                     {128, 5, 300, 17, 0},
                                     {256, 4, 1500, 9, 512},
                                     {256, 4, 900, 24, 511},
                                     {64, 6, 400, 20, 37, 32},
                                     {128, 2, 2049, 1, 1000, 64},
                                     {32, 2, 301, 33, 99, 16, 1, 3.0f}};
    // 0xffff: every unwritten slot a NaN; 0: zeros.
    for (const uint16_t fill : {uint16_t{0xffff}, uint16_t{0}}) {
        for (const Case& c : cases) {
            const TwinCaches caches(rng, c, fill);
            Queries queries = make_queries(rng, c);
            const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
            const int32_t kv_head = c.n_kv_heads - 1;
            const int32_t whole = std::max(1, kMaxTileRows / c.n_heads);
            const auto want = attend(*bf16, c, caches.layer(tensor::DType::F16), caches.block_table,
                                     queries, kv_head, scale, whole, 1);
            for (const auto& [tokens_per_tile, n_pieces] :
                 {std::pair{whole, 1}, std::pair{1, 1}, std::pair{5, 1}, std::pair{1, 3},
                  std::pair{whole, 4}}) {
                const auto got =
                    attend(*bf16, c, caches.layer(tensor::DType::BF16), caches.block_table, queries,
                           kv_head, scale, tokens_per_tile, n_pieces);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                    << c.describe() << ", fill " << fill << ", tiles of " << tokens_per_tile
                    << " tokens, " << n_pieces << " pieces";
            }
        }
    }
}

// Every reader that wants rows gets a tiled position's values back.
TEST(ChunkedAttention, a_row_reads_back_from_its_tiles) {
    std::mt19937 rng(26);
    const Case c{64, 1, 70, 1, 0, 32, 3};
    const TwinCaches caches(rng, c, 0xffff);
    for (int32_t h = 0; h < c.n_kv_heads; ++h) {
        for (const auto side : {KvRowReader::Side::Keys, KvRowReader::Side::Values}) {
            KvRowReader f16_rows(caches.layer(tensor::DType::F16), side, caches.block_table.data(),
                                 h);
            KvRowReader bf16_rows(caches.layer(tensor::DType::BF16), side,
                                  caches.block_table.data(), h);
            for (int32_t p = 0; p < c.n_context; ++p) {
                const auto* f16 = reinterpret_cast<const uint16_t*>(f16_rows(p));
                const auto* bf16 = reinterpret_cast<const uint16_t*>(bf16_rows(p));
                for (int32_t d = 0; d < c.head_dim; ++d) {
                    ASSERT_EQ(tensor::fp16_to_fp32(f16[d]), tensor::bf16_to_fp32(bf16[d]))
                        << "head " << h << " position " << p << " d " << d;
                }
            }
        }
    }
}

}  // namespace chunked_attention_test
}  // namespace ladder::kernels::cpu
