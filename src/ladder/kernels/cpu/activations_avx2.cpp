// silu_mul with AVX2 + FMA, bit-identical to the scalar reference: the same
// divide and multiply per element, with fast_exp_avx2 for exp. Runs only after
// CPUID said AVX2 and FMA.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/activations_isa.h"
#include "ladder/kernels/cpu/fast_exp_avx2.h"

namespace ladder::kernels::cpu::detail {

namespace {

// g / (1 + exp(-g)) * u, each operation rounded as in the scalar code.
LADDER_AVX2 inline __m256 silu_times(__m256 g, __m256 u) {
    const __m256 e = fast_exp_avx2(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

}  // namespace

LADDER_AVX2 void silu_mul_avx2(float* gate, const float* up, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(gate + i, silu_times(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
    }
    if (i == n) return;
    // The tail through a zero-padded copy: lanes past n compute silu(0) * 0,
    // which is never stored.
    const auto tail_bytes = sizeof(float) * static_cast<size_t>(n - i);
    alignas(32) float g[8] = {};
    alignas(32) float u[8] = {};
    std::memcpy(g, gate + i, tail_bytes);
    std::memcpy(u, up + i, tail_bytes);
    _mm256_store_ps(g, silu_times(_mm256_load_ps(g), _mm256_load_ps(u)));
    std::memcpy(gate + i, g, tail_bytes);
}

}  // namespace ladder::kernels::cpu::detail
