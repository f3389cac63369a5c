// A BF16 KV cache stored in the attention kernel's tiles (kv_tiles.h): the
// BF16 path reads the tiles as they lie and gives, bit for bit, what it gives
// converting F16 rows that hold the same values, over decode and prefill
// tiles, chunk splits, sliding windows and ragged ends; slots the window does
// not reach may hold anything (NaN included) without changing a bit.
#include "ladder/kernels/cpu/kv_tiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/chunked_attention.h"
#include "ladder/tensor/half.h"

namespace ladder::kernels::cpu {
namespace kv_tiles_test {

using tensor::DType;

// The same random K and V, each value a BF16 that F16 holds exactly too,
// stored through store_kv into an F16 cache and a BF16 one, the blocks in
// shuffled order. Every slot nobody writes holds `fill` (two bytes of it).
struct TwinCaches {
    int32_t n_kv_heads;
    int32_t block_size;
    int32_t head_dim;
    std::vector<int32_t> block_table;
    std::vector<uint16_t> f16_keys, f16_values, bf16_keys, bf16_values;

    TwinCaches(std::mt19937& rng, int32_t n_kv_heads, int32_t block_size, int32_t head_dim,
               int32_t n_positions, uint16_t fill)
        : n_kv_heads(n_kv_heads), block_size(block_size), head_dim(head_dim) {
        const int32_t n_blocks = (n_positions + block_size - 1) / block_size;
        const int32_t n_pool_blocks = n_blocks + 2;
        const auto n_elements =
            static_cast<size_t>(n_pool_blocks) * n_kv_heads * block_size * head_dim;
        for (auto* pool : {&f16_keys, &f16_values, &bf16_keys, &bf16_values}) {
            pool->assign(n_elements, fill);
        }
        std::vector<int32_t> ids(static_cast<size_t>(n_pool_blocks));
        std::iota(ids.begin(), ids.end(), 0);
        std::shuffle(ids.begin(), ids.end(), rng);
        block_table.assign(ids.begin(), ids.begin() + n_blocks);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const auto kv_dim = static_cast<size_t>(n_kv_heads) * head_dim;
        std::vector<float> k(kv_dim);
        std::vector<float> v(kv_dim);
        // A BF16 value F16 holds exactly: F16's subnormals (below 2^-14)
        // are coarser than BF16's steps there, so those become 0.
        const auto as_bf16 = [](float x) {
            const float rounded = tensor::bf16_to_fp32(tensor::fp32_to_bf16(x));
            return std::abs(rounded) < 0x1p-14f ? 0.0f : rounded;
        };
        for (int32_t p = 0; p < n_positions; ++p) {
            for (auto& x : k) x = as_bf16(normal(rng));
            for (auto& x : v) x = as_bf16(normal(rng));
            const int64_t slot =
                int64_t{block_table[static_cast<size_t>(p / block_size)]} * block_size +
                p % block_size;
            store_kv(k.data(), v.data(), slot, f16_keys.data(), f16_values.data(),
                     layer(DType::F16));
            store_kv(k.data(), v.data(), slot, bf16_keys.data(), bf16_values.data(),
                     layer(DType::BF16));
        }
    }

    PagedKvLayer layer(DType type) const {
        const bool f16 = type == DType::F16;
        return {f16 ? f16_keys.data() : bf16_keys.data(),
                f16 ? f16_values.data() : bf16_values.data(),
                n_kv_heads,
                block_size,
                head_dim,
                type,
                type};
    }
};

struct Case {
    int32_t head_dim;
    int32_t n_heads;
    int32_t n_context;
    int32_t n_tokens;
    int32_t window;  // 0: full causal attention
    int32_t block_size = 16;

    std::string describe() const {
        return "head_dim " + std::to_string(head_dim) + ", " + std::to_string(n_heads) +
               " heads, context " + std::to_string(n_context) + ", " + std::to_string(n_tokens) +
               " tokens, window " + std::to_string(window) + ", block " +
               std::to_string(block_size);
    }
};

// The case's tokens in tiles of tokens_per_tile, each tile's chunks in
// n_pieces pieces (1: merged as they come; more: partials, then merged).
std::vector<float> attend(const ChunkedAttentionKernels& kernels, const Case& c,
                          const PagedKvLayer& kv, const std::vector<int32_t>& block_table,
                          const std::vector<float>& q, int32_t tokens_per_tile, int32_t n_pieces) {
    std::vector<int32_t> first_visible;
    std::vector<int32_t> end_visible;
    for (int32_t t = 0; t < c.n_tokens; ++t) {
        const int32_t position = c.n_context - c.n_tokens + t;
        first_visible.push_back(c.window > 0 ? std::max(0, position - c.window + 1) : 0);
        end_visible.push_back(position + 1);
    }
    const int64_t stride = int64_t{c.n_heads} * c.head_dim;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    std::vector<float> out(q.size(), std::nanf(""));
    std::vector<float> scratch(chunked_attention_scratch_floats(c.head_dim), std::nanf(""));
    for (int32_t t0 = 0; t0 < c.n_tokens; t0 += tokens_per_tile) {
        const AttentionTile tile{q.data() + t0 * stride,
                                 out.data() + t0 * stride,
                                 stride,
                                 std::min(tokens_per_tile, c.n_tokens - t0),
                                 c.n_heads,
                                 first_visible.data() + t0,
                                 end_visible.data() + t0};
        const int32_t first = tile.first_chunk();
        const int32_t n_chunks = tile.end_chunk() - first;
        const auto rows = static_cast<size_t>(tile.n_rows());
        std::vector<float> o(static_cast<size_t>(n_chunks) * rows * c.head_dim);
        std::vector<float> max(static_cast<size_t>(n_chunks) * rows);
        std::vector<float> sum(static_cast<size_t>(n_chunks) * rows);
        for (int32_t p = 0; p < n_pieces; ++p) {
            const int32_t begin = n_chunks * p / n_pieces;
            const int32_t end = n_chunks * (p + 1) / n_pieces;
            const auto skip = static_cast<size_t>(begin);
            const ChunkPartials partials{o.data() + skip * rows * c.head_dim,
                                         max.data() + skip * rows, sum.data() + skip * rows};
            kernels.attend(tile, kv, 1, block_table.data(), scale, first + begin, first + end,
                           n_pieces == 1 ? nullptr : &partials, scratch.data());
        }
        if (n_pieces > 1) {
            kernels.merge(tile, c.head_dim, {o.data(), max.data(), sum.data()}, n_chunks,
                          scratch.data());
        }
    }
    return out;
}

const ChunkedAttentionKernels* bf16_kernels() {
    for (const ChunkedAttentionKernels* kernels : supported_chunked_attention()) {
        if (kernels->name == "avx512-bf16") return kernels;
    }
    return nullptr;
}

TEST(KvTiles, bf16_path_reads_tiles_as_it_converts_f16_rows) {
    const ChunkedAttentionKernels* kernels = bf16_kernels();
    if (kernels == nullptr) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
    std::mt19937 rng(41);
    const std::vector<Case> cases = {
        {64, 3, 1, 1, 0},          {64, 3, 2, 2, 0},           {64, 3, 31, 31, 0},
        {64, 3, 127, 40, 0},       {64, 3, 129, 1, 0},         {64, 3, 1000, 32, 0},
        {64, 3, 4097, 3, 0},       {64, 3, 4097, 1, 0},        {128, 1, 129, 96, 0},
        {128, 5, 300, 17, 0},      {256, 4, 1500, 9, 512},     {256, 4, 900, 24, 511},
        {64, 6, 400, 20, 37, 32},  {128, 2, 2049, 1, 1000, 64}, {32, 2, 301, 33, 99}};
    // 0xffff: every unwritten slot a NaN; 0: zeros.
    for (const uint16_t fill : {uint16_t{0xffff}, uint16_t{0}}) {
        for (const Case& c : cases) {
            const TwinCaches caches(rng, 2, c.block_size, c.head_dim, c.n_context, fill);
            std::normal_distribution<float> normal(0.0f, 1.0f);
            std::vector<float> q(static_cast<size_t>(c.n_tokens) * c.n_heads * c.head_dim);
            for (auto& x : q) x = normal(rng);
            const int32_t whole = std::max(1, kMaxTileRows / c.n_heads);
            const auto want =
                attend(*kernels, c, caches.layer(DType::F16), caches.block_table, q, whole, 1);
            for (const auto& [tokens_per_tile, n_pieces] :
                 {std::pair{whole, 1}, std::pair{1, 1}, std::pair{5, 1}, std::pair{1, 3},
                  std::pair{whole, 4}}) {
                const auto got = attend(*kernels, c, caches.layer(DType::BF16),
                                        caches.block_table, q, tokens_per_tile, n_pieces);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                    << c.describe() << ", fill " << fill << ", tiles of " << tokens_per_tile
                    << " tokens, " << n_pieces << " pieces";
            }
        }
    }
}

TEST(KvTiles, a_row_reads_back_from_its_tiles) {
    std::mt19937 rng(42);
    const Case c{64, 1, 70, 1, 0, 32};
    const TwinCaches caches(rng, 3, c.block_size, c.head_dim, c.n_context, 0xffff);
    for (int32_t h = 0; h < 3; ++h) {
        KvRowReader f16_keys(caches.layer(DType::F16), KvRowReader::Side::Keys,
                             caches.block_table.data(), h);
        KvRowReader bf16_keys(caches.layer(DType::BF16), KvRowReader::Side::Keys,
                              caches.block_table.data(), h);
        KvRowReader f16_values(caches.layer(DType::F16), KvRowReader::Side::Values,
                               caches.block_table.data(), h);
        KvRowReader bf16_values(caches.layer(DType::BF16), KvRowReader::Side::Values,
                                caches.block_table.data(), h);
        for (int32_t p = 0; p < c.n_context; ++p) {
            const auto* f16_key = reinterpret_cast<const uint16_t*>(f16_keys(p));
            const auto* bf16_key = reinterpret_cast<const uint16_t*>(bf16_keys(p));
            const auto* f16_value = reinterpret_cast<const uint16_t*>(f16_values(p));
            const auto* bf16_value = reinterpret_cast<const uint16_t*>(bf16_values(p));
            for (int32_t d = 0; d < c.head_dim; ++d) {
                ASSERT_EQ(tensor::fp16_to_fp32(f16_key[d]), tensor::bf16_to_fp32(bf16_key[d]))
                    << "head " << h << " position " << p << " d " << d;
                ASSERT_EQ(tensor::fp16_to_fp32(f16_value[d]), tensor::bf16_to_fp32(bf16_value[d]))
                    << "head " << h << " position " << p << " d " << d;
            }
        }
    }
}

}  // namespace kv_tiles_test
}  // namespace ladder::kernels::cpu
