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

// weight_q8_0_values for kHeads heads: one pass over the positions per Q8_0
// block of the row (32 dimensions, two vectors per head in registers), so no
// decoded row is stored and each accumulator is one fma chain in position
// order. The block table is read once per cache block, not once per row.
template <int kHeads>
LADDER_AVX512 void weight_heads(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                                int32_t first_visible, int32_t n_scores, const float* weights,
                                const float* rescales, float* out) {
    const int64_t row_bytes = kv.value_row_bytes();
    const int64_t block_stride = int64_t{kv.n_kv_heads} * kv.block_size * row_bytes;
    const auto* pool =
        static_cast<const uint8_t*>(kv.values) + int64_t{kv_head} * kv.block_size * row_bytes;
    const int32_t n_blocks = kv.head_dim / tensor::kQK;
    for (int32_t b = 0; b < n_blocks; ++b) {
        __m512 acc[kHeads][2];
        for (auto& head : acc) head[0] = head[1] = _mm512_setzero_ps();
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
            for (const int32_t end = i + n_rows; i < end; ++i, row += row_bytes) {
                const auto* block = reinterpret_cast<const BlockQ8_0*>(row);
                const __m512 d = _mm512_set1_ps(half_to_float(block->d));
                const auto* qs = reinterpret_cast<const int8_t*>(block->qs);
                const __m512 lo = decode_16(qs, d);
                const __m512 hi = decode_16(qs + 16, d);
                for (int h = 0; h < kHeads; ++h) {
                    const float rescale = rescales[h * n_scores + i];
                    if (rescale != 1.0f) {
                        const __m512 r = _mm512_set1_ps(rescale);
                        acc[h][0] = _mm512_mul_ps(acc[h][0], r);
                        acc[h][1] = _mm512_mul_ps(acc[h][1], r);
                    }
                    const __m512 p = _mm512_set1_ps(weights[h * n_scores + i]);
                    acc[h][0] = _mm512_fmadd_ps(lo, p, acc[h][0]);
                    acc[h][1] = _mm512_fmadd_ps(hi, p, acc[h][1]);
                }
            }
        }
        for (int h = 0; h < kHeads; ++h) {
            float* head_out = out + h * kv.head_dim + b * tensor::kQK;
            _mm512_storeu_ps(head_out, acc[h][0]);
            _mm512_storeu_ps(head_out + 16, acc[h][1]);
        }
    }
}

// weight_heads by its number of heads less one.
using WeightHeadsFn = void (*)(const PagedKvLayer&, const int32_t*, int32_t, int32_t, int32_t,
                               const float*, const float*, float*);
constexpr WeightHeadsFn kWeightHeads[] = {weight_heads<1>, weight_heads<2>, weight_heads<3>,
                                          weight_heads<4>, weight_heads<5>, weight_heads<6>,
                                          weight_heads<7>, weight_heads<8>};

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
        kWeightHeads[std::min(kMaxHeads, n_heads - h0) - 1](kv, block_table, kv_head, first_visible,
                                                            n_scores, w, r, o);
    }
}

}  // namespace ladder::kernels::cpu::detail
