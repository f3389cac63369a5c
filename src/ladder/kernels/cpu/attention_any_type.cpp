// Attention over a paged cache of any KV types (attend_heads_any_type): the
// order llama.cpp's flash-attention CPU path runs for a quantized cache, one
// K and one V row at a time through the row ops of kv_rows.h. The scores are
// the key type's vec_dot (the AVX2 paths score Q8_0 keys eight at a time in
// the same bits), the softmax llama.cpp's online one (an expf per score, a
// rescale on each new maximum); the fast paths weight Q8_0 values without
// storing a decoded row, in the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/kv_rows.h"
#include "ladder/kernels/cpu/kv_tiles.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

void detail::online_softmax_scalar(float* scores, float* rescales, int32_t n, int32_t n_heads,
                                   float* sums) {
    for (int32_t h = 0; h < n_heads; ++h) {
        float* head_scores = scores + static_cast<int64_t>(h) * n;
        float* head_rescales = rescales + static_cast<int64_t>(h) * n;
        float running_max = -std::numeric_limits<float>::infinity();
        float sum = 0.0f;
        for (int32_t i = 0; i < n; ++i) {
            const float score = head_scores[i];
            if (score > running_max) {
                head_rescales[i] = std::exp(running_max - score);
                running_max = score;
                head_scores[i] = 1.0f;
            } else {
                head_rescales[i] = 1.0f;
                head_scores[i] = std::exp(score - running_max);
            }
            sum = std::fma(sum, head_rescales[i], head_scores[i]);
        }
        sums[h] = sum;
    }
}

namespace {

// Heads handled per pass over the rows: each K and V row is read once for all of them.
constexpr int32_t kHeadsPerPass = 8;
// The widest dot-product form of a query row: F32.
constexpr int64_t kMaxQueryRowBytes = int64_t{kMaxHeadDim} * 4;

// scores[h * n_scores + i] = dot(key of position first_visible + i, query h)
// * scale through the key type's vec_dot, one key at a time.
void score_keys(const CpuKernels& kernels, const PagedKvLayer& kv, const int32_t* block_table,
                int32_t kv_head, int32_t first_visible, int32_t n_scores, const uint8_t* q_rows,
                int64_t q_row_stride, int32_t n_heads, float scale, float* scores) {
    const VecDotFn dot = kernels.vec_dot(kv.key_type);
    LADDER_CHECK(dot != nullptr, "no dot product for the key type");
    KvRowReader key_rows(kv, KvRowReader::Side::Keys, block_table, kv_head);
    for (int32_t i = 0; i < n_scores; ++i) {
        const uint8_t* key = key_rows(first_visible + i);
        for (int32_t h = 0; h < n_heads; ++h) {
            scores[h * n_scores + i] = dot(key, q_rows + h * q_row_stride, kv.head_dim) * scale;
        }
    }
}

template <Isa kIsa>
void attend_pass(const float* q, int32_t n_heads, const int32_t* block_table, int32_t first_visible,
                 int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head, float scale,
                 float* scores, float* out) {
    const CpuKernels& kernels = cpu_kernels_for(kIsa);
    const int32_t head_dim = kv.head_dim;
    const int32_t n_scores = n_visible - first_visible;
    const QuantizeRowFn to_dot_type = kernels.quantize_row(tensor::vec_dot_type(kv.key_type));
    LADDER_CHECK(to_dot_type != nullptr, "no quantizer for the key type's dot product");
    const detail::KvRowOps value_ops = detail::kv_row_ops(kIsa, kv.value_type);
    LADDER_CHECK(value_ops.decode != nullptr, "no decoder for the value type");

    // Each query in the key type's dot form, as llama.cpp converts it.
    alignas(64) uint8_t q_dot[kHeadsPerPass][kMaxQueryRowBytes];
    for (int32_t h = 0; h < n_heads; ++h) to_dot_type(q + h * head_dim, q_dot[h], head_dim);

    if (kIsa != Isa::Scalar && kv.key_type == tensor::DType::Q8_0) {
        detail::score_q8_0_keys_avx2(kv, block_table, kv_head, first_visible, n_scores, q_dot[0],
                                     kMaxQueryRowBytes, n_heads, scale, scores);
    } else {
        score_keys(kernels, kv, block_table, kv_head, first_visible, n_scores, q_dot[0],
                   kMaxQueryRowBytes, n_heads, scale, scores);
    }
    // The softmax online, as llama.cpp's flash-attention CPU path runs it for
    // a quantized cache (ggml's flash_attn_ext one_chunk), key by key in
    // position order: a score above the running maximum M scales the
    // accumulator and the sum by expf(M - score) and weighs its value 1; any
    // other weighs expf(score - M); sum = fma(sum, rescale, weight). Its
    // roundings are that path's, so the logits are llama.cpp's bit for bit
    // (tests/model/test_kv_cache_dtype.py); a two-pass softmax had moved
    // 4% of the top tokens.
    thread_local std::vector<float> rescale_rows;
    rescale_rows.resize(static_cast<size_t>(n_heads) * static_cast<size_t>(n_scores));
    float* rescales = rescale_rows.data();
    float sums[kHeadsPerPass];
    const auto online_softmax = kIsa == Isa::Scalar   ? detail::online_softmax_scalar
                                : kIsa == Isa::Avx512 ? detail::online_softmax_avx512
                                                      : detail::online_softmax_avx2;
    online_softmax(scores, rescales, n_scores, n_heads, sums);
    // The weighted values: each V row is dequantized once for all the heads
    // and added in F32 (fma), in position order. The fast paths decode a Q8_0
    // row in registers straight into the heads' accumulators (the same fma
    // chains), which a row stored and loaded again per head made slower than
    // f16 at long context (docs/performance.md, "Quantized KV cache").
    if (kIsa != Isa::Scalar && kv.value_type == tensor::DType::Q8_0) {
        const auto weight = kIsa == Isa::Avx512 ? detail::weight_q8_0_values_avx512
                                                : detail::weight_q8_0_values_avx2;
        weight(kv, block_table, kv_head, first_visible, n_scores, scores, rescales, n_heads, out);
    } else {
        alignas(64) float row[kMaxHeadDim];
        for (int32_t h = 0; h < n_heads; ++h) std::fill_n(out + h * head_dim, head_dim, 0.0f);
        KvRowReader value_rows(kv, KvRowReader::Side::Values, block_table, kv_head);
        for (int32_t i = 0; i < n_scores; ++i) {
            value_ops.decode(value_rows(first_visible + i), row, head_dim);
            for (int32_t h = 0; h < n_heads; ++h) {
                float* acc = out + h * head_dim;
                const float rescale = rescales[h * n_scores + i];
                if (rescale != 1.0f) {
                    for (int32_t d = 0; d < head_dim; ++d) acc[d] *= rescale;
                }
                value_ops.weight(acc, row, scores[h * n_scores + i], head_dim);
            }
        }
    }
    for (int32_t h = 0; h < n_heads; ++h) {
        const float inverse_sum = sums[h] == 0.0f ? 0.0f : 1.0f / sums[h];
        float* acc = out + h * head_dim;
        for (int32_t d = 0; d < head_dim; ++d) acc[d] *= inverse_sum;
    }
}

template <Isa kIsa>
void attend_heads_any(const float* q, int32_t n_heads, const int32_t* block_table,
                      int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                      int32_t kv_head, float scale, float* scores, float* out) {
    const int32_t head_dim = kv.head_dim;
    LADDER_CHECK(head_dim <= kMaxHeadDim && head_dim % 32 == 0,
                 "a quantized KV cache needs head_dim a multiple of 32, at most kMaxHeadDim");
    const int32_t n_scores = n_visible - first_visible;
    if (n_scores <= 0) {
        std::fill_n(out, static_cast<size_t>(n_heads) * static_cast<size_t>(head_dim), 0.0f);
        return;
    }
    for (int32_t h0 = 0; h0 < n_heads; h0 += kHeadsPerPass) {
        const int32_t n = std::min(kHeadsPerPass, n_heads - h0);
        attend_pass<kIsa>(q + h0 * head_dim, n, block_table, first_visible, n_visible, kv, kv_head,
                          scale, scores + static_cast<int64_t>(h0) * n_scores, out + h0 * head_dim);
    }
}

}  // namespace

AttendHeadsFn attend_heads_any_type_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    switch (isa) {
        case Isa::Scalar:
            return attend_heads_any<Isa::Scalar>;
        case Isa::Avx2:
            return attend_heads_any<Isa::Avx2>;
        case Isa::Avx512:
            return attend_heads_any<Isa::Avx512>;
    }
    return attend_heads_any<Isa::Scalar>;
}

void attend_heads_any_type(const float* q, int32_t n_heads, const int32_t* block_table,
                           int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                           int32_t kv_head, float scale, float* scores, float* out) {
    static const AttendHeadsFn chosen = attend_heads_any_type_for(cpu_kernels().isa);
    chosen(q, n_heads, block_table, first_visible, n_visible, kv, kv_head, scale, scores, out);
}

}  // namespace ladder::kernels::cpu
