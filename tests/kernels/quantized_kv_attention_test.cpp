// The KV cache in types other than F16 (--kv-cache-dtype): store_kv writes
// ggml's bytes for the type (Q8_0: the x86 quantizer llama.cpp stores with,
// itself tested against ggml in vec_dot_test; the others: tensor's
// reference) at a slot and nothing else; attention over such
// a cache, on the exact path (attend_heads_any_type) and the fast path
// (chunked attention), against attention computed in double on the
// dequantized rows; and every fast path against the scalar one, the Q8_0
// values weighted in registers against the scalar row ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/chunked_attention.h"
#include "ladder/kernels/cpu/kv_rows.h"
#include "ladder/kernels/cpu/kv_tiles.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/reference_ops.h"
#include "paged_cache.h"

namespace ladder::kernels::cpu {
namespace quantized_kv_attention_test {

using testing::shuffled_block_table;

using tensor::DType;

int64_t row_bytes(DType type, int32_t head_dim) {
    return static_cast<int64_t>(*tensor::row_bytes(type, head_dim));
}

std::string type_names(DType key, DType value) {
    return "K " + std::string(tensor::dtype_name(key)) + ", V " +
           std::string(tensor::dtype_name(value));
}

// A paged cache of random K and V stored through store_kv in shuffled blocks,
// with every stored row dequantized back for the references.
struct TypedCache {
    int32_t n_kv_heads;
    int32_t block_size;
    int32_t head_dim;
    DType key_type;
    DType value_type;
    std::vector<uint8_t> keys;
    std::vector<uint8_t> values;
    std::vector<int32_t> block_table;
    std::vector<float> key_rows;    // [position][kv_head][head_dim], dequantized
    std::vector<float> value_rows;  // same

    TypedCache(std::mt19937& rng, int32_t n_kv_heads, int32_t block_size, int32_t head_dim,
               int32_t n_positions, DType key_type, DType value_type)
        : n_kv_heads(n_kv_heads),
          block_size(block_size),
          head_dim(head_dim),
          key_type(key_type),
          value_type(value_type) {
        const int32_t n_blocks = (n_positions + block_size - 1) / block_size;
        const int32_t n_pool_blocks = n_blocks + 2;
        const auto rows = static_cast<size_t>(n_pool_blocks) * n_kv_heads * block_size;
        keys.assign(rows * static_cast<size_t>(row_bytes(key_type, head_dim)), 0);
        values.assign(rows * static_cast<size_t>(row_bytes(value_type, head_dim)), 0);
        block_table = shuffled_block_table(rng, n_blocks, n_pool_blocks);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const auto kv_dim = static_cast<size_t>(n_kv_heads) * head_dim;
        std::vector<float> k(kv_dim);
        std::vector<float> v(kv_dim);
        for (int32_t p = 0; p < n_positions; ++p) {
            for (auto& x : k) x = normal(rng);
            for (auto& x : v) x = normal(rng);
            const int64_t slot =
                int64_t{block_table[static_cast<size_t>(p / block_size)]} * block_size +
                p % block_size;
            store_kv(k.data(), v.data(), slot, keys.data(), values.data(), layer());
            for (int32_t h = 0; h < n_kv_heads; ++h) {
                key_rows.resize(key_rows.size() + static_cast<size_t>(head_dim));
                value_rows.resize(value_rows.size() + static_cast<size_t>(head_dim));
                KvRowReader stored_keys(layer(), KvRowReader::Side::Keys, block_table.data(), h);
                KvRowReader stored_values(layer(), KvRowReader::Side::Values, block_table.data(),
                                          h);
                tensor::dequantize_row(key_type, stored_keys(p),
                                       key_rows.data() + key_rows.size() - head_dim, head_dim);
                tensor::dequantize_row(value_type, stored_values(p),
                                       value_rows.data() + value_rows.size() - head_dim, head_dim);
            }
        }
    }

    PagedKvLayer layer() const {
        return {keys.data(), values.data(), n_kv_heads, block_size, head_dim, key_type, value_type};
    }
    const float* key(int32_t position, int32_t kv_head) const {
        return key_rows.data() + (static_cast<size_t>(position) * n_kv_heads + kv_head) * head_dim;
    }
    const float* value(int32_t position, int32_t kv_head) const {
        return value_rows.data() +
               (static_cast<size_t>(position) * n_kv_heads + kv_head) * head_dim;
    }
};

// softmax(q . K * scale) . V in double over [first, end), on dequantized rows.
std::vector<double> attention_in_double(const TypedCache& cache, const float* q, int32_t kv_head,
                                        int32_t first, int32_t end, double scale) {
    std::vector<double> scores;
    for (int32_t p = first; p < end; ++p) {
        double dot = 0.0;
        for (int32_t d = 0; d < cache.head_dim; ++d) dot += double{q[d]} * cache.key(p, kv_head)[d];
        scores.push_back(dot * scale);
    }
    const double max_score = *std::max_element(scores.begin(), scores.end());
    double sum = 0.0;
    for (auto& s : scores) sum += (s = std::exp(s - max_score));
    std::vector<double> out(static_cast<size_t>(cache.head_dim), 0.0);
    for (int32_t p = first; p < end; ++p) {
        const double weight = scores[static_cast<size_t>(p - first)] / sum;
        for (int32_t d = 0; d < cache.head_dim; ++d) {
            out[static_cast<size_t>(d)] += weight * cache.value(p, kv_head)[d];
        }
    }
    return out;
}

// The query as the exact path sees it: in the key type's dot-product form.
std::vector<float> in_dot_form(const std::vector<float>& q, DType key_type) {
    const DType dot_type = tensor::vec_dot_type(key_type);
    std::vector<uint8_t> bytes(
        static_cast<size_t>(row_bytes(dot_type, static_cast<int32_t>(q.size()))));
    std::vector<float> out(q.size());
    tensor::quantize_row(dot_type, q.data(), bytes.data(), static_cast<int64_t>(q.size()));
    tensor::dequantize_row(dot_type, bytes.data(), out.data(), static_cast<int64_t>(q.size()));
    return out;
}

std::vector<float> random_rows(std::mt19937& rng, size_t n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> out(n);
    for (auto& x : out) x = normal(rng);
    return out;
}

std::vector<Isa> supported_isas() {
    std::vector<Isa> isas = {Isa::Scalar};
    for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
        if (isa_supported(isa, cpu_features())) isas.push_back(isa);
    }
    return isas;
}

const std::vector<std::pair<DType, DType>> kTypePairs = {
    {DType::Q8_0, DType::Q8_0}, {DType::Q4_0, DType::Q4_0}, {DType::BF16, DType::BF16},
    {DType::Q8_0, DType::F16},  {DType::F16, DType::Q4_0},
};

void quantize_as_stored(DType type, const float* x, uint8_t* out, int32_t n) {
    if (type == DType::Q8_0) {
        cpu_kernels_for(Isa::Scalar).quantize_row(type)(x, out, n);
    } else {
        tensor::quantize_row(type, x, out, n);
    }
}

// The bytes of a pool a slot's row occupies (one head's): a run of row bytes,
// or for a type stored in tiles its two-byte elements spread over the block.
std::vector<bool> slot_bytes(DType type, bool keys, int32_t n_kv_heads, int32_t block_size,
                             int32_t head_dim, int64_t slot, size_t pool_bytes) {
    const int64_t bytes = row_bytes(type, head_dim);
    const int64_t block = slot / block_size;
    const auto in_block = static_cast<int32_t>(slot % block_size);
    std::vector<bool> out(pool_bytes, false);
    for (int32_t h = 0; h < n_kv_heads; ++h) {
        const int64_t head_block = (block * n_kv_heads + h) * block_size * bytes;
        for (int32_t d = 0; d < head_dim; ++d) {
            const int64_t tile_index = keys ? key_tile_index(in_block, d, head_dim)
                                            : value_tile_index(in_block, d, head_dim);
            const int64_t at =
                stored_in_tiles(type) ? head_block + 2 * tile_index : head_block + in_block * bytes;
            const int64_t n = stored_in_tiles(type) ? 2 : bytes;
            for (int64_t b = 0; b < n; ++b) out[static_cast<size_t>(at + b)] = true;
        }
    }
    return out;
}

TEST(QuantizedKv, store_kv_writes_ggmls_values_at_its_slot_only) {
    std::mt19937 rng(31);
    const int32_t n_kv_heads = 3;
    const int32_t head_dim = 64;
    for (const auto& [key_type, value_type] : kTypePairs) {
        // The smallest block the types allow, so neighbours of the slot are many.
        const int32_t block_size = stored_in_tiles(key_type) ? kKeyTilePositions : 4;
        const int64_t key_bytes = row_bytes(key_type, head_dim);
        const int64_t value_bytes = row_bytes(value_type, head_dim);
        const PagedKvLayer layout{nullptr,  nullptr,  n_kv_heads, block_size,
                                  head_dim, key_type, value_type};
        const auto n_rows = static_cast<size_t>(2 * n_kv_heads * block_size);
        std::vector<uint8_t> keys(n_rows * static_cast<size_t>(key_bytes), 0xa5);
        std::vector<uint8_t> values(n_rows * static_cast<size_t>(value_bytes), 0xa5);
        const auto k = random_rows(rng, static_cast<size_t>(n_kv_heads * head_dim));
        const auto v = random_rows(rng, static_cast<size_t>(n_kv_heads * head_dim));
        const int64_t slot = block_size + 2;  // block 1, third token
        store_kv(k.data(), v.data(), slot, keys.data(), values.data(), layout);
        const std::vector<int32_t> identity = {0, 1};
        const PagedKvLayer stored{keys.data(), values.data(), n_kv_heads, block_size,
                                  head_dim,    key_type,      value_type};
        for (int32_t h = 0; h < n_kv_heads; ++h) {
            std::vector<uint8_t> want_key(static_cast<size_t>(key_bytes));
            std::vector<uint8_t> want_value(static_cast<size_t>(value_bytes));
            quantize_as_stored(key_type, k.data() + h * head_dim, want_key.data(), head_dim);
            quantize_as_stored(value_type, v.data() + h * head_dim, want_value.data(), head_dim);
            KvRowReader key_rows(stored, KvRowReader::Side::Keys, identity.data(), h);
            KvRowReader value_rows(stored, KvRowReader::Side::Values, identity.data(), h);
            EXPECT_EQ(
                std::memcmp(key_rows(static_cast<int32_t>(slot)), want_key.data(), want_key.size()),
                0)
                << type_names(key_type, value_type) << " head " << h;
            EXPECT_EQ(std::memcmp(value_rows(static_cast<int32_t>(slot)), want_value.data(),
                                  want_value.size()),
                      0)
                << type_names(key_type, value_type) << " head " << h;
        }
        // Every other byte (other blocks, other tokens of the block) is left alone.
        const auto only_slot_written = [&](const std::vector<uint8_t>& pool, DType type,
                                           bool is_keys) {
            const std::vector<bool> in_slot =
                slot_bytes(type, is_keys, n_kv_heads, block_size, head_dim, slot, pool.size());
            for (size_t i = 0; i < pool.size(); ++i) {
                if (!in_slot[i] && pool[i] != 0xa5) return false;
            }
            return true;
        };
        EXPECT_TRUE(only_slot_written(keys, key_type, true)) << type_names(key_type, value_type);
        EXPECT_TRUE(only_slot_written(values, value_type, false))
            << type_names(key_type, value_type);
    }
}

TEST(QuantizedKv, exact_path_matches_attention_in_double_on_the_dequantized_cache) {
    std::mt19937 rng(32);
    for (const auto& [key_type, value_type] : kTypePairs) {
        for (const int32_t head_dim : {64, 256}) {
            const int32_t n_context = 150;
            const TypedCache cache(rng, 2, 16, head_dim, n_context, key_type, value_type);
            const int32_t n_heads = 5;
            const auto q = random_rows(rng, static_cast<size_t>(n_heads * head_dim));
            const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
            for (const int32_t first : {0, 37}) {
                for (const Isa isa : supported_isas()) {
                    std::vector<float> scores(static_cast<size_t>(n_heads * n_context));
                    std::vector<float> out(q.size(), std::nanf(""));
                    attend_heads_any_type_for(isa)(q.data(), n_heads, cache.block_table.data(),
                                                   first, n_context, cache.layer(), 1, scale,
                                                   scores.data(), out.data());
                    for (int32_t h = 0; h < n_heads; ++h) {
                        const std::vector<float> q_h(q.begin() + h * head_dim,
                                                     q.begin() + (h + 1) * head_dim);
                        const auto want = attention_in_double(
                            cache, in_dot_form(q_h, key_type).data(), 1, first, n_context, scale);
                        for (int32_t d = 0; d < head_dim; ++d) {
                            ASSERT_NEAR(out[static_cast<size_t>(h * head_dim + d)],
                                        want[static_cast<size_t>(d)], 1e-5)
                                << isa_name(isa) << " " << type_names(key_type, value_type)
                                << " head_dim " << head_dim << " head " << h << " d " << d;
                        }
                    }
                }
            }
        }
    }
}

TEST(QuantizedKv, every_exact_path_gives_the_scalar_paths_bits) {
    std::mt19937 rng(33);
    for (const auto& [key_type, value_type] : kTypePairs) {
        const int32_t head_dim = 64;
        const int32_t n_context = 300;
        const TypedCache cache(rng, 3, 16, head_dim, n_context, key_type, value_type);
        const int32_t n_heads = 11;  // two passes of up to 8 heads
        const auto q = random_rows(rng, static_cast<size_t>(n_heads * head_dim));
        std::vector<float> scores(static_cast<size_t>(n_heads * n_context));
        std::vector<float> want(q.size());
        attend_heads_any_type_for(Isa::Scalar)(q.data(), n_heads, cache.block_table.data(), 5,
                                               n_context, cache.layer(), 2, 0.125f, scores.data(),
                                               want.data());
        for (const Isa isa : supported_isas()) {
            std::vector<float> got(q.size(), std::nanf(""));
            attend_heads_any_type_for(isa)(q.data(), n_heads, cache.block_table.data(), 5,
                                           n_context, cache.layer(), 2, 0.125f, scores.data(),
                                           got.data());
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << isa_name(isa) << " " << type_names(key_type, value_type);
        }
    }
}

// The Q8_0 key scorers of the fast paths give, for every head and key, the
// bits of the scalar Q8_0 vec_dot times the scale, and each head's largest
// score, over head counts from 1 to 8, rows of 1 to 8 Q8_0 blocks and windows
// whose length leaves every tail of a group of eight keys.
TEST(QuantizedKv, q8_0_key_scorers_give_the_scalar_dot_products_bits) {
    std::mt19937 rng(36);
    using ScoreFn = void (*)(const PagedKvLayer&, const int32_t*, int32_t, int32_t, int32_t,
                             const uint8_t*, int64_t, int32_t, float, float*);
    std::vector<std::pair<Isa, ScoreFn>> paths;
    if (isa_supported(Isa::Avx2, cpu_features())) {
        paths.emplace_back(Isa::Avx2, detail::score_q8_0_keys_avx2);
    }
    if (paths.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    const CpuKernels& scalar = cpu_kernels_for(Isa::Scalar);
    for (const int32_t head_dim : {32, 64, 96, 256}) {
        const int32_t n_context = 83;
        const TypedCache cache(rng, 3, 16, head_dim, n_context, DType::Q8_0, DType::Q8_0);
        const PagedKvLayer kv = cache.layer();
        const int64_t key_bytes = kv.key_row_bytes();
        const int64_t q_stride = key_bytes + 34;  // rows apart by more than their bytes
        for (const int32_t n_heads : {1, 3, 5, 8}) {
            std::vector<uint8_t> q_rows(static_cast<size_t>(n_heads * q_stride));
            const auto q = random_rows(rng, static_cast<size_t>(n_heads * head_dim));
            for (int32_t h = 0; h < n_heads; ++h) {
                scalar.quantize_row(DType::Q8_0)(q.data() + h * head_dim,
                                                 q_rows.data() + h * q_stride, head_dim);
            }
            for (const auto& [first, end] : std::vector<std::pair<int32_t, int32_t>>{
                     {0, n_context}, {5, n_context}, {37, 38}, {16, 32}, {17, 70}, {1, 8}}) {
                const int32_t n_scores = end - first;
                const float scale = 0.125f;
                std::vector<float> want(static_cast<size_t>(n_heads * n_scores));
                for (int32_t h = 0; h < n_heads; ++h) {
                    for (int32_t i = 0; i < n_scores; ++i) {
                        want[static_cast<size_t>(h * n_scores + i)] =
                            scalar.vec_dot(DType::Q8_0)(
                                kv.row(kv.keys, key_bytes, cache.block_table.data(), 2, first + i),
                                q_rows.data() + h * q_stride, head_dim) *
                            scale;
                    }
                }
                for (const auto& [isa, score] : paths) {
                    std::vector<float> got(want.size(), std::nanf(""));
                    score(kv, cache.block_table.data(), 2, first, n_scores, q_rows.data(), q_stride,
                          n_heads, scale, got.data());
                    const std::string what =
                        std::string(isa_name(isa)) + " head_dim " + std::to_string(head_dim) +
                        " heads " + std::to_string(n_heads) + " positions [" +
                        std::to_string(first) + ", " + std::to_string(end) + ")";
                    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
                        << what;
                }
            }
        }
    }
}

// The Q8_0 values decoded in registers and weighted into every head's
// accumulators give the bits of the scalar path's row ops (decode a row, then
// per head a rescale where there is one and an fma per value, position by
// position), over head counts that
// leave partial groups of heads, rows of 1 to 8 Q8_0 blocks and windows that
// start and end inside a cache block.
TEST(QuantizedKv, q8_0_values_weighted_in_registers_give_the_row_ops_bits) {
    std::mt19937 rng(35);
    using WeightFn = void (*)(const PagedKvLayer&, const int32_t*, int32_t, int32_t, int32_t,
                              const float*, const float*, int32_t, float*);
    std::vector<std::pair<Isa, WeightFn>> paths;
    if (isa_supported(Isa::Avx2, cpu_features())) {
        paths.emplace_back(Isa::Avx2, detail::weight_q8_0_values_avx2);
    }
    if (isa_supported(Isa::Avx512, cpu_features())) {
        paths.emplace_back(Isa::Avx512, detail::weight_q8_0_values_avx512);
    }
    if (paths.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    const detail::KvRowOps ops = detail::kv_row_ops(Isa::Scalar, DType::Q8_0);
    for (const int32_t head_dim : {32, 64, 96, 256}) {
        const int32_t n_context = 83;
        const TypedCache cache(rng, 3, 16, head_dim, n_context, DType::Q8_0, DType::Q8_0);
        const PagedKvLayer kv = cache.layer();
        const int64_t value_bytes = kv.value_row_bytes();
        // A new maximum score at about one position in six, or rarely (runs
        // of rows with no rescale in any head take a path of their own).
        for (const auto& [n_heads, one_in] : std::vector<std::pair<int32_t, uint32_t>>{
                 {1, 6}, {2, 6}, {3, 6}, {4, 6}, {5, 6}, {7, 6}, {8, 6}, {9, 6}, {11, 6},
                 {1, 200}, {3, 200}, {4, 200}, {5, 200}, {9, 200}}) {
            for (const auto& [first, end] : std::vector<std::pair<int32_t, int32_t>>{
                     {0, n_context}, {5, n_context}, {37, 38}, {16, 32}, {17, 70}}) {
                const int32_t n_scores = end - first;
                auto weights = random_rows(rng, static_cast<size_t>(n_heads * n_scores));
                for (auto& w : weights) w = std::fabs(w) / 4.0f;
                std::vector<float> rescales(weights.size(), 1.0f);
                for (auto& r : rescales) {
                    if (rng() % one_in == 0) r = std::ldexp(static_cast<float>(rng() % 1000), -10);
                }
                std::vector<float> want(static_cast<size_t>(n_heads * head_dim), 0.0f);
                std::vector<float> row(static_cast<size_t>(head_dim));
                for (int32_t i = 0; i < n_scores; ++i) {
                    ops.decode(
                        kv.row(kv.values, value_bytes, cache.block_table.data(), 2, first + i),
                        row.data(), head_dim);
                    for (int32_t h = 0; h < n_heads; ++h) {
                        float* acc = want.data() + h * head_dim;
                        const auto at = static_cast<size_t>(h * n_scores + i);
                        for (int32_t d = 0; d < head_dim; ++d) acc[d] *= rescales[at];
                        ops.weight(acc, row.data(), weights[at], head_dim);
                    }
                }
                for (const auto& [isa, weight] : paths) {
                    // One row past the heads' outputs shows a write beyond them.
                    std::vector<float> got(want.size() + static_cast<size_t>(head_dim),
                                           std::nanf(""));
                    weight(kv, cache.block_table.data(), 2, first, n_scores, weights.data(),
                           rescales.data(), n_heads, got.data());
                    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
                        << isa_name(isa) << " head_dim " << head_dim << " heads " << n_heads
                        << " positions [" << first << ", " << end << ")";
                    EXPECT_TRUE(std::all_of(got.begin() + static_cast<std::ptrdiff_t>(want.size()),
                                            got.end(), [](float x) { return std::isnan(x); }))
                        << isa_name(isa) << " wrote past " << n_heads << " heads";
                }
            }
        }
    }
}

TEST(QuantizedKv, fast_path_matches_attention_in_double_on_the_dequantized_cache) {
    std::mt19937 rng(34);
    for (const auto& [key_type, value_type] : kTypePairs) {
        const int32_t head_dim = 64;
        const int32_t n_context = 300;  // three chunks, the last ragged
        const int32_t n_tokens = 3;
        const int32_t n_heads = 3;
        const TypedCache cache(rng, 2, 16, head_dim, n_context, key_type, value_type);
        const auto q = random_rows(rng, static_cast<size_t>(n_tokens * n_heads * head_dim));
        std::vector<int32_t> first(n_tokens, 0);
        std::vector<int32_t> end;
        for (int32_t t = 0; t < n_tokens; ++t) end.push_back(n_context - n_tokens + t + 1);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        for (const ChunkedAttentionKernels* kernels : supported_chunked_attention()) {
            std::vector<float> out(q.size(), std::nanf(""));
            const AttentionTile tile{q.data(),  out.data(), int64_t{n_heads} * head_dim,
                                     n_tokens,  n_heads,    first.data(),
                                     end.data()};
            std::vector<float> scratch(chunked_attention_scratch_floats(head_dim));
            kernels->attend(tile, cache.layer(), 1, cache.block_table.data(), scale,
                            tile.first_chunk(), tile.end_chunk(), nullptr, scratch.data());
            // The BF16 path reads a BF16 cache's tiles itself, rounding q and
            // the probabilities to BF16 (chunked_attention_test's bound); it
            // leaves the other types to the avx2 path, F32 throughout.
            const bool bf16_products = kernels->name == "avx512-bf16" &&
                                       stored_in_tiles(key_type) && stored_in_tiles(value_type);
            const double tolerance = bf16_products ? 3e-2 : 2e-6;
            for (int32_t t = 0; t < n_tokens; ++t) {
                for (int32_t h = 0; h < n_heads; ++h) {
                    const float* q_row = q.data() + (t * n_heads + h) * head_dim;
                    const auto want = attention_in_double(cache, q_row, 1, 0, end[t], scale);
                    for (int32_t d = 0; d < head_dim; ++d) {
                        ASSERT_NEAR(out[static_cast<size_t>((t * n_heads + h) * head_dim + d)],
                                    want[static_cast<size_t>(d)], tolerance)
                            << kernels->name << " " << type_names(key_type, value_type) << " token "
                            << t << " head " << h << " d " << d;
                    }
                }
            }
        }
    }
}

}  // namespace quantized_kv_attention_test
}  // namespace ladder::kernels::cpu
