// Test helpers for the attention kernels: a paged F16 KV pool with random
// keys and values, in the shuffled block order a real cache hands out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/tensor/half.h"

namespace ladder::kernels::cpu::testing {

// A block table of n_blocks that visits n_pool_blocks in shuffled order, as a
// real cache hands blocks out (the pool's spare blocks nobody's table names).
inline std::vector<int32_t> shuffled_block_table(std::mt19937& rng, int32_t n_blocks,
                                                 int32_t n_pool_blocks) {
    std::vector<int32_t> ids(static_cast<size_t>(n_pool_blocks));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    return {ids.begin(), ids.begin() + n_blocks};
}

// A KV pool with random F16 keys and values, and a block table that visits the
// pool's blocks in shuffled order, as a real cache hands them out.
struct PagedCache {
    int32_t n_kv_heads;
    int32_t block_size;
    int32_t head_dim;
    std::vector<uint16_t> keys;
    std::vector<uint16_t> values;
    std::vector<int32_t> block_table;

    PagedCache(std::mt19937& rng, int32_t n_kv_heads, int32_t block_size, int32_t head_dim,
               int32_t n_positions, float key_scale)
        : n_kv_heads(n_kv_heads), block_size(block_size), head_dim(head_dim) {
        const int32_t n_blocks = (n_positions + block_size - 1) / block_size;
        const int32_t n_pool_blocks = n_blocks + 3;  // spare blocks nobody's table names
        const auto n_elements =
            static_cast<size_t>(n_pool_blocks) * n_kv_heads * block_size * head_dim;
        std::normal_distribution<float> normal(0.0f, 1.0f);
        keys.resize(n_elements);
        values.resize(n_elements);
        for (auto& k : keys) k = tensor::fp32_to_fp16(normal(rng) * key_scale);
        for (auto& v : values) v = tensor::fp32_to_fp16(normal(rng));
        block_table = shuffled_block_table(rng, n_blocks, n_pool_blocks);
    }

    PagedKvLayer layer() const {
        return {keys.data(), values.data(), n_kv_heads, block_size, head_dim};
    }

    const uint16_t* row(const std::vector<uint16_t>& pool, int32_t kv_head,
                        int32_t position) const {
        const int64_t block = block_table[static_cast<size_t>(position / block_size)];
        return pool.data() +
               ((block * n_kv_heads + kv_head) * block_size + position % block_size) * head_dim;
    }
};

inline std::vector<float> random_query(std::mt19937& rng, int32_t head_dim) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(static_cast<size_t>(head_dim));
    for (auto& x : q) x = normal(rng);
    return q;
}

}  // namespace ladder::kernels::cpu::testing
