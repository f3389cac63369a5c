// attend_heads_any_type's weighted values over a Q8_0 value cache with
// AVX-512: each row's block decoded in registers (int8 to float, times its
// scale) and added into every head's accumulators, 16 dimensions a vector;
// and its online softmax with the AVX-512 library-exact expf.
// (Its keys are scored by the AVX2 scorer: a 512-bit one, two keys a vector,
// was no faster on a CPU that splits 512-bit operations.) Runs only after
// CPUID said AVX-512 F/BW/VL/VNNI (and AVX2, FMA, F16C).
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <iterator>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/kv_blocks_ahead.h"
#include "ladder/kernels/cpu/libm_expf_avx512.h"
#include "ladder/kernels/cpu/online_softmax_x86.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

using tensor::BlockQ8_0;

// The 16 values of half a Q8_0 block (qs: its 16 bytes) times the block's scale d:
// one rounding, as the decoders of every path make it.
LADDER_AVX512 inline __m512 decode_16(const int8_t* qs, __m512 d) {
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)))),
                         d);
}

// Whether any of kHeads heads' rescales at positions [i, i + n) (n <= 16)
// is other than 1 (NaN included): after the first positions a new running
// maximum is rare, and a run of rows without one skips the per-row tests.
template <int kHeads>
LADDER_AVX512 inline bool any_rescale(const float* rescales, int32_t n_scores, int32_t i,
                                      int32_t n) {
    const auto live = static_cast<__mmask16>((1u << n) - 1);
    const __m512 one = _mm512_set1_ps(1.0f);
    __mmask16 other = 0;
    for (int h = 0; h < kHeads; ++h) {
        const __m512 r = _mm512_maskz_loadu_ps(live, rescales + int64_t{h} * n_scores + i);
        other |= _mm512_mask_cmp_ps_mask(live, r, one, _CMP_NEQ_UQ);
    }
    return other != 0;
}

// kBlocks consecutive Q8_0 blocks (32 values each) of one row weighed into
// kHeads heads' accumulators, rescaled first where kRescale and the head's
// rescale is not 1. Each accumulator stays one fma chain in position order.
template <int kHeads, int kBlocks, bool kRescale>
LADDER_AVX512 inline void weigh_row(const BlockQ8_0* blocks, const float* weights,
                                    const float* rescales, int32_t n_scores, int32_t i,
                                    __m512 (&acc)[kHeads][2 * kBlocks]) {
    __m512 values[2 * kBlocks];
    for (int j = 0; j < kBlocks; ++j) {
        const __m512 d = _mm512_set1_ps(half_to_float(blocks[j].d));
        const auto* qs = reinterpret_cast<const int8_t*>(blocks[j].qs);
        values[2 * j] = decode_16(qs, d);
        values[2 * j + 1] = decode_16(qs + 16, d);
    }
    for (int h = 0; h < kHeads; ++h) {
        if constexpr (kRescale) {
            const float rescale = rescales[h * n_scores + i];
            if (rescale != 1.0f) {
                const __m512 r = _mm512_set1_ps(rescale);
                for (__m512& a : acc[h]) a = _mm512_mul_ps(a, r);
            }
        }
        const __m512 p = _mm512_set1_ps(weights[h * n_scores + i]);
        for (int v = 0; v < 2 * kBlocks; ++v) acc[h][v] = _mm512_fmadd_ps(values[v], p, acc[h][v]);
    }
}

// weight_q8_0_values for kHeads heads: one pass over the positions per
// kBlocks Q8_0 blocks of the row (32 dimensions each, two vectors per head
// and block in registers), so no decoded row is stored and each accumulator
// is one fma chain in position order. The block table is read once per cache
// block, not once per row.
template <int kHeads, int kBlocks>
LADDER_AVX512 void weight_heads(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                                int32_t first_visible, int32_t n_scores, const float* weights,
                                const float* rescales, float* out) {
    const int64_t row_bytes = kv.value_row_bytes();
    const int64_t block_stride = int64_t{kv.n_kv_heads} * kv.block_size * row_bytes;
    const auto* pool =
        static_cast<const uint8_t*>(kv.values) + int64_t{kv_head} * kv.block_size * row_bytes;
    const int32_t n_blocks = kv.head_dim / tensor::kQK;
    for (int32_t b = 0; b < n_blocks; b += kBlocks) {
        __m512 acc[kHeads][2 * kBlocks];
        for (auto& head : acc) {
            for (__m512& a : head) a = _mm512_setzero_ps();
        }
        // The first pass reads the rows from memory; the later ones find
        // them in L2.
        BlocksAhead ahead(kv, kv.values, row_bytes, block_table, kv_head, first_visible,
                          b == 0 ? n_scores : 0);
        int32_t i = 0;
        while (i < n_scores) {
            ahead.ask(i);
            const int32_t position = first_visible + i;
            const int32_t offset = position % kv.block_size;
            const int32_t n_rows = std::min(kv.block_size - offset, n_scores - i);
            const uint8_t* row = pool + block_table[position / kv.block_size] * block_stride +
                                 offset * row_bytes + b * int64_t{sizeof(BlockQ8_0)};
            const int32_t end = i + n_rows;
            if (n_rows <= 16 && !any_rescale<kHeads>(rescales, n_scores, i, n_rows)) {
                for (; i < end; ++i, row += row_bytes) {
                    weigh_row<kHeads, kBlocks, false>(reinterpret_cast<const BlockQ8_0*>(row),
                                                      weights, rescales, n_scores, i, acc);
                }
            }
            for (; i < end; ++i, row += row_bytes) {
                weigh_row<kHeads, kBlocks, true>(reinterpret_cast<const BlockQ8_0*>(row), weights,
                                                 rescales, n_scores, i, acc);
            }
        }
        for (int h = 0; h < kHeads; ++h) {
            float* head_out = out + h * kv.head_dim + b * tensor::kQK;
            for (int v = 0; v < 2 * kBlocks; ++v) _mm512_storeu_ps(head_out + 16 * v, acc[h][v]);
        }
    }
}

// weight_heads by its number of heads less one: up to four heads take two
// blocks a pass (16 accumulators), which reads each row once at head_dim 64
// and shares each probability's broadcast between the blocks; more heads one.
using WeightHeadsFn = void (*)(const PagedKvLayer&, const int32_t*, int32_t, int32_t, int32_t,
                               const float*, const float*, float*);
constexpr WeightHeadsFn kWeightHeads[] = {weight_heads<1, 1>, weight_heads<2, 1>,
                                          weight_heads<3, 1>, weight_heads<4, 1>,
                                          weight_heads<5, 1>, weight_heads<6, 1>,
                                          weight_heads<7, 1>, weight_heads<8, 1>};
constexpr WeightHeadsFn kWeightHeadsTwoBlocks[] = {weight_heads<1, 2>, weight_heads<2, 2>,
                                                   weight_heads<3, 2>, weight_heads<4, 2>};

struct LibmExpfAvx512 {
    LADDER_AVX512 static __m256 exp(__m256 x) { return libm_expf_avx512(x); }
};

}  // namespace

void online_softmax_avx512(float* scores, float* rescales, int32_t n, int32_t n_heads,
                           float* sums) {
    online_softmax_x8<LibmExpfAvx512>(scores, rescales, n, n_heads, sums);
}

LADDER_AVX512 void weight_q8_0_values_avx512(const PagedKvLayer& kv, const int32_t* block_table,
                                             int32_t kv_head, int32_t first_visible,
                                             int32_t n_scores, const float* weights,
                                             const float* rescales, int32_t n_heads, float* out) {
    // Up to eight heads at once: 16 accumulators, with the decoded vectors,
    // scale and probability, stay inside the 32 vector registers.
    constexpr auto kMaxHeads = static_cast<int32_t>(std::size(kWeightHeads));
    for (int32_t h0 = 0; h0 < n_heads; h0 += kMaxHeads) {
        const float* w = weights + int64_t{h0} * n_scores;
        const float* r = rescales + int64_t{h0} * n_scores;
        float* o = out + int64_t{h0} * kv.head_dim;
        const int32_t heads = std::min(kMaxHeads, n_heads - h0);
        const bool two_blocks = kv.head_dim % (2 * tensor::kQK) == 0 &&
                                heads <= static_cast<int32_t>(std::size(kWeightHeadsTwoBlocks));
        (two_blocks ? kWeightHeadsTwoBlocks : kWeightHeads)[heads - 1](
            kv, block_table, kv_head, first_visible, n_scores, w, r, o);
    }
}

}  // namespace ladder::kernels::cpu::detail
