// AVX-512 VNNI dot products: vpdpbusd (256-bit, through AVX512VL) does the
// u8 x s8 multiply and the four-way add to int32 that AVX2 needs maddubs + madd
// for. Measured (docs/performance.md): ~5% over AVX2 for Q4_1, even for Q8_0;
// two blocks per 512-bit register measured 30% slower, so it is not used. All
// other dtypes keep the AVX2 kernels.
// GCC 12's AVX-512 headers initialize "undefined" vectors from themselves and
// warn about it wherever they inline (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/quant_blocks.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::BlockQ4_1;
using tensor::BlockQ8_0;
using tensor::BlockQ8_1;
using tensor::kQK;




LADDER_AVX512 inline __m256i load_32(const int8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}


// One block per 256-bit step, as the AVX2 path, with vpdpbusd for maddubs + madd.
LADDER_AVX512 float vec_dot_q4_1_q8_1(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const BlockQ4_1*>(weights);
    const auto* a = static_cast<const BlockQ8_1*>(activations);
    const int64_t n_blocks = n / kQK;
    __m256 acc = _mm256_setzero_ps();
    float offsets = 0.0f;  // sum of m_w * s_a, block by block
    for (int64_t i = 0; i < n_blocks; ++i) {
        const __m256i sums = _mm256_dpbusd_epi32(_mm256_setzero_si256(),
                                                 unpack_nibbles_16(w[i].qs), load_32(a[i].qs));
        const float scale = half_to_float(w[i].d) * half_to_float(a[i].d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(sums), acc);
        offsets += half_to_float(w[i].m) * half_to_float(a[i].s);
    }
    return hsum(acc) + offsets;
}

LADDER_AVX512 float vec_dot_q8_0_q8_0(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const BlockQ8_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activations);
    const int64_t n_blocks = n / kQK;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n_blocks; ++i) {
        const __m256i x = load_32(w[i].qs);
        // vpdpbusd wants one unsigned operand: |x| and y carrying x's sign.
        const __m256i sums = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(x, x),
                                                 _mm256_sign_epi8(load_32(a[i].qs), x));
        const float scale = half_to_float(w[i].d) * half_to_float(a[i].d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(sums), acc);
    }
    return hsum(acc);
}

}  // namespace

namespace detail {

void install_avx512_kernels(CpuKernels& k) {
    using tensor::DType;
    k.vec_dot_by_weight[static_cast<int>(DType::Q4_1)] = vec_dot_q4_1_q8_1;
    k.vec_dot_by_weight[static_cast<int>(DType::Q8_0)] = vec_dot_q8_0_q8_0;
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
