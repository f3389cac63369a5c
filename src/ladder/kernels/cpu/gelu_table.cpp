#include "ladder/kernels/cpu/gelu_table.h"

#include <array>
#include <cmath>

#include "ladder/tensor/half.h"

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

void gelu_mul_f16_table(float* gate, const float* up, int64_t n) {
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

}  // namespace ladder::kernels::cpu
