// KV row ops with AVX2 + FMA + F16C, bit-identical to the scalar ones: each
// value is the integer (or half) times its block's scale, one multiply, as
// ggml's dequantizers compute it. Runs only after CPUID said AVX2, FMA, F16C.
#include <immintrin.h>

#include "ladder/kernels/cpu/kv_rows.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu::detail {

namespace {

LADDER_AVX2 void decode_f16(const void* row, float* out, int32_t n) {
    const auto* h = static_cast<const uint16_t*>(row);
    for (int32_t d = 0; d < n; d += 8) {
        _mm256_storeu_ps(out + d,
                         _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + d))));
    }
}

LADDER_AVX2 void decode_bf16(const void* row, float* out, int32_t n) {
    const auto* h = static_cast<const uint16_t*>(row);
    for (int32_t d = 0; d < n; d += 8) {
        const __m256i wide =
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + d)));
        _mm256_storeu_ps(out + d, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
    }
}

// Eight int8 values times d.
LADDER_AVX2 inline __m256 scaled_i8x8(__m128i bytes, __m256 d) {
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), d);
}

LADDER_AVX2 void decode_q8_0(const void* row, float* out, int32_t n) {
    const auto* blocks = static_cast<const tensor::BlockQ8_0*>(row);
    for (int32_t b = 0; b < n / tensor::kQK; ++b, out += tensor::kQK) {
        const __m256 d = _mm256_set1_ps(half_to_float(blocks[b].d));
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[b].qs));
        const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[b].qs + 16));
        _mm256_storeu_ps(out, scaled_i8x8(lo, d));
        _mm256_storeu_ps(out + 8, scaled_i8x8(_mm_srli_si128(lo, 8), d));
        _mm256_storeu_ps(out + 16, scaled_i8x8(hi, d));
        _mm256_storeu_ps(out + 24, scaled_i8x8(_mm_srli_si128(hi, 8), d));
    }
}

LADDER_AVX2 void decode_q4_0(const void* row, float* out, int32_t n) {
    const auto* blocks = static_cast<const tensor::BlockQ4_0*>(row);
    const __m256i eight = _mm256_set1_epi8(8);
    for (int32_t b = 0; b < n / tensor::kQK; ++b, out += tensor::kQK) {
        const __m256 d = _mm256_set1_ps(half_to_float(blocks[b].d));
        // Elements 0..31 as bytes q - 8, in [-8, 7].
        alignas(32) int8_t q[32];
        _mm256_store_si256(reinterpret_cast<__m256i*>(q),
                           _mm256_sub_epi8(unpack_nibbles_16(blocks[b].qs), eight));
        for (int j = 0; j < 32; j += 8) {
            _mm256_storeu_ps(
                out + j, scaled_i8x8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + j)), d));
        }
    }
}

}  // namespace

DecodeKvRowFn decode_kv_row_avx2(tensor::DType type) {
    switch (type) {
        case tensor::DType::F16:
            return decode_f16;
        case tensor::DType::BF16:
            return decode_bf16;
        case tensor::DType::Q8_0:
            return decode_q8_0;
        case tensor::DType::Q4_0:
            return decode_q4_0;
        default:
            return nullptr;
    }
}

LADDER_AVX2 void weight_row_avx2(float* acc, const float* x, float a, int32_t n) {
    const __m256 a8 = _mm256_set1_ps(a);
    for (int32_t d = 0; d < n; d += 8) {
        _mm256_storeu_ps(acc + d,
                         _mm256_fmadd_ps(_mm256_loadu_ps(x + d), a8, _mm256_loadu_ps(acc + d)));
    }
}

}  // namespace ladder::kernels::cpu::detail
