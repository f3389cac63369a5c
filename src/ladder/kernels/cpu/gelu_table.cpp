#include "ladder/kernels/cpu/gelu_table.h"

#include <immintrin.h>

#include <array>
#include <cmath>

#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/half.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

namespace {

// 65536 F16 results (128 KiB), built on first use; the function-local static
// makes the one-time build thread-safe.
const std::array<uint16_t, 65536>& gelu_table() {
    static const std::array<uint16_t, 65536> table = [] {
        std::array<uint16_t, 65536> entries{};
        for (uint32_t h = 0; h < entries.size(); ++h) {
            entries[h] = gelu_f16_table_entry(static_cast<uint16_t>(h));
        }
        return entries;
    }();
    return table;
}

}  // namespace

uint16_t gelu_f16_table_entry(uint16_t h) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoefficient = 0.044715f;
    const float x = tensor::fp16_to_fp32(h);
    // 1 + c*x*x is fused as the reference's compiler contracts it (FMA is on
    // in its x86 build); the other products round separately.
    const float inner = kSqrt2OverPi * x * std::fma(kCoefficient * x, x, 1.0f);
    return tensor::fp32_to_fp16(0.5f * x * (1.0f + std::tanh(inner)));
}

namespace {

// The table's entries as floats (256 KiB), for the vector path's gathers.
const std::array<float, 65536>& gelu_table_f32() {
    static const std::array<float, 65536> table = [] {
        std::array<float, 65536> entries{};
        const std::array<uint16_t, 65536>& halves = gelu_table();
        for (size_t h = 0; h < entries.size(); ++h) entries[h] = tensor::fp16_to_fp32(halves[h]);
        return entries;
    }();
    return table;
}

void gelu_mul_f16_table_scalar(float* gate, const float* up, int64_t n) {
    const std::array<uint16_t, 65536>& table = gelu_table();
    for (int64_t i = 0; i < n; ++i) {
        const float x = gate[i];
        if (x <= -10.0f) {
            gate[i] = 0.0f;
        } else if (x >= 10.0f) {
            gate[i] = x * up[i];
        } else {
            gate[i] = tensor::fp16_to_fp32(table[tensor::fp32_to_fp16(x)]) * up[i];
        }
    }
}

// Eight at a time: F16C rounds to F16 as fp32_to_fp16 does (to nearest even)
// and a gather reads the float table; the two cut-offs are blends. A NaN
// gate stays NaN (its payload may differ from the scalar path's).
LADDER_AVX2 void gelu_mul_f16_table_avx2(float* gate, const float* up, int64_t n) {
    const float* table = gelu_table_f32().data();
    const __m256 low = _mm256_set1_ps(-10.0f);
    const __m256 high = _mm256_set1_ps(10.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(gate + i);
        const __m256 u = _mm256_loadu_ps(up + i);
        const __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
        const __m256 g = _mm256_i32gather_ps(table, h, 4);
        __m256 out = _mm256_mul_ps(g, u);
        out = _mm256_blendv_ps(out, _mm256_mul_ps(x, u), _mm256_cmp_ps(x, high, _CMP_GE_OQ));
        out = _mm256_blendv_ps(out, _mm256_setzero_ps(), _mm256_cmp_ps(x, low, _CMP_LE_OQ));
        _mm256_storeu_ps(gate + i, out);
    }
    gelu_mul_f16_table_scalar(gate + i, up + i, n - i);
}

}  // namespace

GatedActivationFn gelu_mul_f16_table_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    return isa == Isa::Scalar ? gelu_mul_f16_table_scalar : gelu_mul_f16_table_avx2;
}

void gelu_mul_f16_table(float* gate, const float* up, int64_t n) {
    static const GatedActivationFn chosen = gelu_mul_f16_table_for(cpu_kernels().isa);
    chosen(gate, up, n);
}

}  // namespace ladder::kernels::cpu
