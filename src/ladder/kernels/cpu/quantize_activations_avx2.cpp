// AVX2 quantization of activation rows to Q8_0, Q8_1, Q8_K and F16. Each must
// write the same bytes as the scalar kernel path (vec_dot_scalar.cpp): the
// scales are computed with its scalar expressions, and only the per-element
// work (abs max, multiply, rounding, packing) is vectorized.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::BlockQ8_0;
using tensor::BlockQ8_1;
using tensor::BlockQ8_K;
using tensor::kQK;
using tensor::kQKK;


LADDER_AVX2 inline __m256 abs_ps(__m256 v) {
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

// Largest |x| over 8 * n_vectors floats; max is exact and order-free.
LADDER_AVX2 inline float abs_max(const float* x, int n_vectors) {
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < n_vectors; ++k) m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(x + 8 * k)));
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Packs four vectors of int32 (elements 0-7, 8-15, 16-23, 24-31) into 32 int8
// in element order: packs works within 128-bit lanes, the permute undoes that.
LADDER_AVX2 inline __m256i pack_32(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i lo = _mm256_packs_epi32(v0, v1);
    const __m256i hi = _mm256_packs_epi32(v2, v3);
    return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(lo, hi),
                                       _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

LADDER_AVX2 inline int32_t sum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// Quantizes one 32-element block with inverse scale id, rounding half to
// even; returns the sum of the codes.
LADDER_AVX2 inline int32_t quantize_32(const float* x, float id, int8_t* qs) {
    const __m256 mul = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
        const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), mul);
        q[k] = _mm256_cvtps_epi32(_mm256_round_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), pack_32(q[0], q[1], q[2], q[3]));
    return sum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
}

LADDER_AVX2 void quantize_row_q8_0(const float* x, void* out, int64_t n) {
    auto* blocks = static_cast<BlockQ8_0*>(out);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        const float amax = abs_max(x, kQK / 8);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        blocks[i].d = tensor::fp32_to_fp16(d);
        quantize_32(x, id, blocks[i].qs);
    }
}

LADDER_AVX2 void quantize_row_q8_1(const float* x, void* out, int64_t n) {
    auto* blocks = static_cast<BlockQ8_1*>(out);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        const float amax = abs_max(x, kQK / 8);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        blocks[i].d = tensor::fp32_to_fp16(d);
        const int32_t sum = quantize_32(x, id, blocks[i].qs);
        blocks[i].s = tensor::fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

// Q8_K follows ggml's reference: the scale comes from the first element of
// largest magnitude with its sign (iscale = -127 / max), codes round to nearest
// even (cvtps2dq under the default MXCSR mode) and are capped at 127, and d is
// stored as 1 / iscale.
LADDER_AVX2 void quantize_row_q8_k(const float* x, void* out, int64_t n) {
    auto* blocks = static_cast<BlockQ8_K*>(out);
    constexpr int kVectors = kQKK / 8;
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        BlockQ8_K& b = blocks[i];
        const float amax = abs_max(x, kVectors);
        if (amax == 0.0f) {
            b.d = 0.0f;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.bsums), _mm256_setzero_si256());
            for (int k = 0; k < kQKK / 32; ++k) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.qs) + k, _mm256_setzero_si256());
            }
            continue;
        }
        float max = 0.0f;
        for (int k = 0; k < kVectors; ++k) {
            const __m256 hit =
                _mm256_cmp_ps(abs_ps(_mm256_loadu_ps(x + 8 * k)), _mm256_set1_ps(amax), _CMP_EQ_OQ);
            const int mask = _mm256_movemask_ps(hit);
            if (mask != 0) {
                max = x[8 * k + __builtin_ctz(static_cast<unsigned>(mask))];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 mul = _mm256_set1_ps(iscale);
        const __m256i cap = _mm256_set1_epi32(127);
        for (int g = 0; g < kQKK / 32; ++g) {  // 32 codes: bsums 2g and 2g + 1
            __m256i q[4];
            for (int k = 0; k < 4; ++k) {
                const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + 32 * g + 8 * k), mul);
                q[k] = _mm256_min_epi32(_mm256_cvtps_epi32(v), cap);
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.qs + 32 * g),
                                pack_32(q[0], q[1], q[2], q[3]));
            b.bsums[2 * g] = static_cast<int16_t>(sum_i32(_mm256_add_epi32(q[0], q[1])));
            b.bsums[2 * g + 1] = static_cast<int16_t>(sum_i32(_mm256_add_epi32(q[2], q[3])));
        }
        b.d = 1.0f / iscale;
    }
}

// F16 conversion: vcvtps2ph with round-to-nearest-even is the reference's rounding.
LADDER_AVX2 void quantize_row_f16(const float* x, void* out, int64_t n) {
    auto* h = static_cast<uint16_t*>(out);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; ++i) h[i] = tensor::fp32_to_fp16(x[i]);
}

}  // namespace

namespace detail {

void install_avx2_quantizers(CpuKernels& k) {
    using tensor::DType;
    k.quantize_by_type[static_cast<int>(DType::Q8_0)] = quantize_row_q8_0;
    k.quantize_by_type[static_cast<int>(DType::Q8_1)] = quantize_row_q8_1;
    k.quantize_by_type[static_cast<int>(DType::Q8_K)] = quantize_row_q8_k;
    k.quantize_by_type[static_cast<int>(DType::F16)] = quantize_row_f16;
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
