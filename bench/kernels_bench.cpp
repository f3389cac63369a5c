// GB/s of weights streamed by matmul for each weight dtype, kernel path and
// thread count: the number that bounds decode speed (DESIGN.md "physics").
// Weight matrices are 32 MiB or more, larger than the caches, as in decode.
// "Batched matmul": model shapes at T activation rows, with the multi-row
// (GemmFn) kernels and without them (vecdot/: one vec_dot per output).
// "attention/": a token's grouped query heads over 512 cached positions.
// "attention_depth/": one decode step's attention at 4,096 positions over
// every layer of SmolLM2 (94 MB of F16 K and V, past the caches), on the
// exact and the fast (chunked) path: GB/s of KV read.
// "attention_prefill/": one prefill tile (32 tokens x 3 query heads) of the
// fast path at 4,096 positions: GFLOPS of q.k and p.v.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/chunked_attention.h"
#include "ladder/kernels/cpu/matmul.h"
#include "ladder/kernels/cpu/quantize_activations.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/reference_ops.h"

namespace {

using namespace ladder;
using kernels::cpu::Isa;
using tensor::DType;

constexpr int64_t kNIn = 1536;  // SmolLM2's FFN width; a whole number of K-quant blocks
constexpr size_t kTargetBytes = size_t{48} << 20;

// Random float rows quantized by tensor's reference, so every scale is sane.
std::vector<uint8_t> make_weights(DType dtype, int64_t n_out, int64_t n_in) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<float> row(n_in);
    const size_t row_bytes = *tensor::row_bytes(dtype, n_in);
    std::vector<uint8_t> out(row_bytes * static_cast<size_t>(n_out));
    const bool direct = tensor::can_quantize(dtype);
    std::vector<uint8_t> template_row(row_bytes);
    // The K-quants' reference quantizers search scales: seconds per MiB, so
    // 64 distinct rows are quantized and repeated to fill the matrix.
    constexpr int64_t kDistinctRows = 64;
    for (int64_t r = 0; r < n_out; ++r) {
        for (auto& v : row) v = normal(rng);
        if (direct && r >= kDistinctRows) {
            std::memcpy(out.data() + r * row_bytes, out.data() + (r % kDistinctRows) * row_bytes,
                        row_bytes);
        } else if (direct) {
            tensor::quantize_row(dtype, row.data(), out.data() + r * row_bytes, n_in);
        } else {
            // K-quants have no reference quantizer: random codes, small scales.
            for (size_t b = 0; b < row_bytes; ++b)
                out[r * row_bytes + b] = static_cast<uint8_t>(rng());
        }
    }
    if (!direct) {
        const int64_t n_blocks =
            static_cast<int64_t>(out.size()) / tensor::dtype_traits(dtype).block_bytes;
        const int64_t block_bytes = tensor::dtype_traits(dtype).block_bytes;
        const uint16_t small = tensor::fp32_to_fp16(0.001f);
        for (int64_t b = 0; b < n_blocks; ++b) {
            uint8_t* block = out.data() + b * block_bytes;
            if (dtype == DType::Q6_K) {
                std::memcpy(block + 208, &small, 2);
            } else {
                std::memcpy(block, &small, 2);
                std::memcpy(block + 2, &small, 2);
            }
        }
    }
    return out;
}

// The kernels of one path, optionally without its multi-row kernels.
kernels::cpu::CpuKernels kernels_of(Isa isa, bool multi_row) {
    kernels::cpu::CpuKernels k = kernels::cpu::cpu_kernels_for(isa);
    if (!multi_row) k.gemm_by_weight.fill(nullptr);
    return k;
}

// n_out x n_in weights (n_out = 0: enough rows for kTargetBytes) times
// state.range(1) activation rows on state.range(0) threads.
void run_matmul(benchmark::State& state, Isa isa, DType dtype, int64_t n_out, int64_t n_in,
                bool multi_row) {
    if (!kernels::cpu::isa_supported(isa, kernels::cpu::cpu_features())) {
        state.SkipWithError("path not supported by this CPU");
        return;
    }
    const kernels::cpu::CpuKernels k = kernels_of(isa, multi_row);
    const int n_threads = static_cast<int>(state.range(0));
    const int64_t n_rows = state.range(1);
    const size_t row_bytes = *tensor::row_bytes(dtype, n_in);
    if (n_out == 0) n_out = static_cast<int64_t>(kTargetBytes / row_bytes);
    const auto weights = make_weights(dtype, n_out, n_in);
    const auto w = kernels::cpu::make_weight_matrix(dtype, weights.data(), n_out, n_in);

    std::mt19937 rng(8);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n_rows * n_in));
    for (auto& v : x) v = normal(rng);
    const DType act = tensor::vec_dot_type(dtype);
    std::vector<uint8_t> buffer(kernels::cpu::quantized_activations_bytes(act, n_rows, n_in));
    const auto q = kernels::cpu::quantize_activations(k, act, x.data(), n_rows, n_in, buffer.data(),
                                                      buffer.size());
    std::vector<float> out(static_cast<size_t>(n_rows * n_out));
    util::ThreadPool pool(n_threads);
    for (auto _ : state) {
        kernels::cpu::matmul(k, w, q, out.data(), pool);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                            static_cast<int64_t>(weights.size()));
    state.counters["GFLOP/s"] = benchmark::Counter(
        2.0 * static_cast<double>(n_out * n_in * n_rows) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

void bm_matmul(benchmark::State& state, Isa isa, DType dtype) {
    run_matmul(state, isa, dtype, 0, kNIn, true);
}

// One weight matrix of a target model, as the engine multiplies it.
struct ModelShape {
    DType dtype;
    int64_t n_out;
    int64_t n_in;
};

// SmolLM2-135M: the FFN's gate/up [1536 x 576] Q4_1 and the tied output
// matrix [49152 x 576] Q8_0, the largest single product per token. Gemma 3
// 270M Q4_K_M: the MLP gate/up [2048 x 640] Q5_0 and down projection
// [640 x 2048], Q4_K or Q6_K by layer.
constexpr ModelShape kModelShapes[] = {{DType::Q4_1, 1536, 576},
                                       {DType::Q8_0, 49152, 576},
                                       {DType::Q5_0, 2048, 640},
                                       {DType::Q4_K, 640, 2048},
                                       {DType::Q6_K, 640, 2048}};

void bm_model_matmul(benchmark::State& state, Isa isa, ModelShape shape, bool multi_row) {
    run_matmul(state, isa, shape.dtype, shape.n_out, shape.n_in, multi_row);
}

void bm_quantize(benchmark::State& state, Isa isa, DType act) {
    if (!kernels::cpu::isa_supported(isa, kernels::cpu::cpu_features())) {
        state.SkipWithError("path not supported by this CPU");
        return;
    }
    const auto quantize = kernels::cpu::cpu_kernels_for(isa).quantize_row(act);
    const int64_t n = 64 * kNIn;
    std::vector<float> x(static_cast<size_t>(n), 0.25f);
    std::vector<uint8_t> out(*tensor::row_bytes(act, n));
    for (auto _ : state) {
        quantize(x.data(), out.data(), n);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 4);
}

// Attention of one token's query heads that share a KV head, over a
// 512-position context in one block table: per head (attend_head, each head
// converting every K and V row) or as a group (attend_heads, once for all).
struct AttentionShape {
    const char* model;
    int32_t head_dim;
    int32_t group;  // query heads per KV head
};

void bm_attention(benchmark::State& state, Isa isa, AttentionShape shape, bool grouped) {
    if (!kernels::cpu::isa_supported(isa, kernels::cpu::cpu_features())) {
        state.SkipWithError("path not supported by this CPU");
        return;
    }
    constexpr int32_t kContext = 512;
    constexpr int32_t kBlockSize = 16;
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto n_elements = static_cast<size_t>(kContext) * shape.head_dim;
    std::vector<uint16_t> keys(n_elements);
    std::vector<uint16_t> values(n_elements);
    for (auto& k : keys) k = tensor::fp32_to_fp16(normal(rng));
    for (auto& v : values) v = tensor::fp32_to_fp16(normal(rng));
    std::vector<int32_t> block_table(kContext / kBlockSize);
    for (size_t i = 0; i < block_table.size(); ++i) block_table[i] = static_cast<int32_t>(i);
    const kernels::cpu::PagedKvLayer kv{keys.data(), values.data(), 1, kBlockSize, shape.head_dim};
    std::vector<float> q(static_cast<size_t>(shape.group * shape.head_dim));
    for (auto& x : q) x = normal(rng);
    std::vector<float> scores(static_cast<size_t>(shape.group * kContext));
    std::vector<float> out(q.size());
    const auto head = kernels::cpu::attend_head_for(isa);
    const auto heads = kernels::cpu::attend_heads_for(isa);
    const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    for (auto _ : state) {
        if (grouped) {
            heads(q.data(), shape.group, block_table.data(), 0, kContext, kv, 0, scale,
                  scores.data(), out.data());
        } else {
            for (int32_t h = 0; h < shape.group; ++h) {
                head(q.data() + h * shape.head_dim, block_table.data(), 0, kContext, kv, 0, scale,
                     scores.data(), out.data() + h * shape.head_dim);
            }
        }
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * shape.group);
}

// SmolLM2's KV at `kContext` positions for n_layers of its 30 layers: 3 KV
// heads x 64 dimensions, each layer's pool laid out as the KV cache lays it
// out ([block][kv_head][position in block][dimension]), blocks in order, its
// rows of kv_type (F16, or Q8_0 as `--kv-cache-dtype q8_0` stores them; BF16
// in the fast kernel's tiles, kernels/cpu/kv_tiles.h).
struct DepthCache {
    static constexpr int32_t kContext = 4096;
    static constexpr int32_t kBlockSize = 16;
    static constexpr int32_t kKvHeads = 3;
    static constexpr int32_t kGroup = 3;  // query heads per KV head
    static constexpr int32_t kHeadDim = 64;

    DepthCache(int32_t n_layers, DType kv_type)
        : layout{nullptr, nullptr, kKvHeads, kBlockSize, kHeadDim, kv_type, kv_type},
          layer_bytes(static_cast<size_t>(kContext) * kKvHeads *
                      static_cast<size_t>(layout.key_row_bytes())),
          keys(layer_bytes * n_layers),
          values(keys.size()),
          block_table(kContext / kBlockSize) {
        std::mt19937 rng(9);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> k_row(kKvHeads * kHeadDim);
        std::vector<float> v_row(k_row.size());
        for (int32_t layer = 0; layer < n_layers; ++layer) {
            for (int64_t slot = 0; slot < kContext; ++slot) {
                for (auto& x : k_row) x = normal(rng);
                for (auto& x : v_row) x = normal(rng);
                kernels::cpu::store_kv(k_row.data(), v_row.data(), slot,
                                       keys.data() + layer * layer_bytes,
                                       values.data() + layer * layer_bytes, layout);
            }
        }
        for (size_t i = 0; i < block_table.size(); ++i) block_table[i] = static_cast<int32_t>(i);
    }

    kernels::cpu::PagedKvLayer layer(int32_t index) const {
        kernels::cpu::PagedKvLayer kv = layout;
        kv.keys = keys.data() + index * layer_bytes;
        kv.values = values.data() + index * layer_bytes;
        return kv;
    }

    kernels::cpu::PagedKvLayer layout;
    size_t layer_bytes;
    std::vector<uint8_t> keys;
    std::vector<uint8_t> values;
    std::vector<int32_t> block_table;
};

std::vector<float> random_queries(size_t n) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(n);
    for (auto& x : q) x = normal(rng);
    return q;
}

// One decode step over state.range(0) layers of a DepthCache (30 read from
// memory; 1 stays in the last-level cache).
void bm_attention_depth(benchmark::State& state, Isa isa, bool fast, DType kv_type) {
    if (!kernels::cpu::isa_supported(isa, kernels::cpu::cpu_features())) {
        state.SkipWithError("path not supported by this CPU");
        return;
    }
    using C = DepthCache;
    const auto n_layers = static_cast<int32_t>(state.range(0));
    const DepthCache cache(n_layers, kv_type);
    constexpr int32_t kQueryFloats = C::kKvHeads * C::kGroup * C::kHeadDim;
    const std::vector<float> q = random_queries(kQueryFloats);
    std::vector<float> out(q.size());
    std::vector<float> scores(static_cast<size_t>(C::kGroup) * C::kContext);
    std::vector<float> scratch(kernels::cpu::chunked_attention_scratch_floats(C::kHeadDim));
    const auto heads = kv_type == DType::F16 ? kernels::cpu::attend_heads_for(isa)
                                             : kernels::cpu::attend_heads_any_type_for(isa);
    const auto& chunked = kernels::cpu::chunked_attention_for(isa);
    const float scale = 1.0f / std::sqrt(static_cast<float>(C::kHeadDim));
    const int32_t first_visible = 0;
    const int32_t end_visible = C::kContext;
    for (auto _ : state) {
        for (int32_t layer = 0; layer < n_layers; ++layer) {
            const kernels::cpu::PagedKvLayer kv = cache.layer(layer);
            for (int32_t h = 0; h < C::kKvHeads; ++h) {
                const int32_t offset = h * C::kGroup * C::kHeadDim;
                if (!fast) {
                    heads(q.data() + offset, C::kGroup, cache.block_table.data(), 0, C::kContext,
                          kv, h, scale, scores.data(), out.data() + offset);
                    continue;
                }
                kernels::cpu::AttentionTile tile;
                tile.q = q.data() + offset;
                tile.out = out.data() + offset;
                tile.token_stride = kQueryFloats;
                tile.n_tokens = 1;
                tile.n_heads = C::kGroup;
                tile.first_visible = &first_visible;
                tile.end_visible = &end_visible;
                chunked.attend(tile, kv, h, cache.block_table.data(), scale, tile.first_chunk(),
                               tile.end_chunk(), nullptr, scratch.data());
            }
        }
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 *
                            static_cast<int64_t>(cache.keys.size()));
}

// One prefill tile of the fast path at depth: the last 32 tokens of a
// 4,096-position context (causal) x the 3 query heads of one KV head, one
// layer (in the last-level cache); prefill at depth runs one such tile per
// 32 tokens and KV head. Counter GFLOPS: 4 x head_dim per position a row
// sees (q.k and p.v).
void bm_attention_prefill(benchmark::State& state, Isa isa, DType kv_type) {
    if (!kernels::cpu::isa_supported(isa, kernels::cpu::cpu_features())) {
        state.SkipWithError("path not supported by this CPU");
        return;
    }
    using C = DepthCache;
    constexpr int32_t kTokens = kernels::cpu::kMaxTileRows / C::kGroup;
    const DepthCache cache(1, kv_type);
    constexpr int32_t kQueryFloats = C::kKvHeads * C::kGroup * C::kHeadDim;
    const std::vector<float> q = random_queries(static_cast<size_t>(kTokens) * kQueryFloats);
    std::vector<float> out(q.size());
    std::vector<float> scratch(kernels::cpu::chunked_attention_scratch_floats(C::kHeadDim));
    std::vector<int32_t> first_visible(kTokens, 0);
    std::vector<int32_t> end_visible(kTokens);
    int64_t positions_seen = 0;
    for (int32_t t = 0; t < kTokens; ++t) {
        end_visible[t] = C::kContext - kTokens + t + 1;
        positions_seen += end_visible[t];
    }
    const auto& chunked = kernels::cpu::chunked_attention_for(isa);
    const float scale = 1.0f / std::sqrt(static_cast<float>(C::kHeadDim));
    const kernels::cpu::PagedKvLayer kv = cache.layer(0);
    kernels::cpu::AttentionTile tile;
    tile.q = q.data();
    tile.out = out.data();
    tile.token_stride = kQueryFloats;
    tile.n_tokens = kTokens;
    tile.n_heads = C::kGroup;
    tile.first_visible = first_visible.data();
    tile.end_visible = end_visible.data();
    for (auto _ : state) {
        chunked.attend(tile, kv, 0, cache.block_table.data(), scale, tile.first_chunk(),
                       tile.end_chunk(), nullptr, scratch.data());
        benchmark::DoNotOptimize(out.data());
    }
    const double flops = 4.0 * C::kHeadDim * C::kGroup * static_cast<double>(positions_seen);
    state.counters["GFLOPS"] = benchmark::Counter(
        flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

int register_all() {
    for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
        const std::string path(kernels::cpu::isa_name(isa));
        for (const DType dtype : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                                  DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                                  DType::F16, DType::BF16}) {
            const std::string name =
                "matmul/" + path + "/" + std::string(tensor::dtype_name(dtype));
            auto* b = benchmark::RegisterBenchmark(name.c_str(), bm_matmul, isa, dtype);
            b->ArgNames({"threads", "T"})->Args({1, 1})->Args({2, 1})->Args({2, 16});
            b->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
        }
        for (const ModelShape& shape : kModelShapes) {
            for (const bool multi_row : {true, false}) {
                const std::string name = std::string(multi_row ? "gemm/" : "vecdot/") + path + "/" +
                                         std::string(tensor::dtype_name(shape.dtype)) + "x" +
                                         std::to_string(shape.n_out);
                auto* b = benchmark::RegisterBenchmark(name.c_str(), bm_model_matmul, isa, shape,
                                                       multi_row);
                // T = 1 is decode; 32 a batched decode step; 512 a prefill chunk.
                b->ArgNames({"threads", "T"});
                for (const int64_t t : {1, 4, 32, 64}) b->Args({1, t});
                b->Args({2, 64});
                // The one-vec_dot-per-output loop and the scalar path take seconds here.
                if (multi_row && isa != Isa::Scalar) b->Args({1, 512})->Args({2, 512});
                // CPU time of the whole process, so 2-thread rows count both threads.
                b->MeasureProcessCPUTime()->UseRealTime();
                b->Unit(benchmark::kMillisecond)->MinTime(0.3);
            }
        }
        for (const AttentionShape shape :
             {AttentionShape{"smollm2", 64, 3}, AttentionShape{"gemma3", 256, 4}}) {
            for (const bool grouped : {false, true}) {
                const std::string name =
                    "attention/" + path + "/" + shape.model + (grouped ? "/grouped" : "/per_head");
                benchmark::RegisterBenchmark(name.c_str(), bm_attention, isa, shape, grouped)
                    ->Unit(benchmark::kMicrosecond)
                    ->MinTime(0.2);
            }
        }
        struct DepthCase {
            const char* name;
            bool fast;
            DType kv_type;
        };
        for (const DepthCase depth :
             {DepthCase{"exact", false, DType::F16}, DepthCase{"fast", true, DType::F16},
              DepthCase{"fast_bf16", true, DType::BF16},
              DepthCase{"exact_q8_0", false, DType::Q8_0}}) {
            const std::string name =
                "attention_depth/" + path + "/" + depth.name + "/smollm2_d4096";
            // 30 layers read from memory; 1 layer stays in the last-level cache.
            benchmark::RegisterBenchmark(name.c_str(), bm_attention_depth, isa, depth.fast,
                                         depth.kv_type)
                ->ArgName("layers")
                ->Arg(30)
                ->Arg(1)
                ->Unit(benchmark::kMillisecond)
                ->MinTime(0.5);
        }
        for (const DType kv_type : {DType::F16, DType::BF16}) {
            const std::string name = "attention_prefill/" + path + "/fast_" +
                                     std::string(tensor::dtype_name(kv_type)) +
                                     "/smollm2_32x3_d4096";
            benchmark::RegisterBenchmark(name.c_str(), bm_attention_prefill, isa, kv_type)
                ->Unit(benchmark::kMillisecond)
                ->MinTime(0.5);
        }
        for (const DType act : {DType::Q8_0, DType::Q8_1, DType::Q8_K}) {
            const std::string name =
                "quantize/" + path + "/" + std::string(tensor::dtype_name(act));
            benchmark::RegisterBenchmark(name.c_str(), bm_quantize, isa, act)->MinTime(0.2);
        }
    }
    return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
