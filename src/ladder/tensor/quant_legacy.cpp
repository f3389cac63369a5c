// Scalar reference for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1. The float
// expressions keep ggml's operand order on purpose: float arithmetic is not
// associative, and bit-exact agreement with ggml is what the tests check.
#include "ladder/tensor/quant_legacy.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "ladder/tensor/half.h"

namespace ladder::tensor {

namespace {

constexpr int kHalf = kQK / 2;  // element j pairs with element j + kHalf in a byte

// The 32 fifth bits of a Q5 block, bit j for element j (qh is little-endian).
uint32_t load_qh(const uint8_t qh[4]) {
    return static_cast<uint32_t>(qh[0]) | (static_cast<uint32_t>(qh[1]) << 8) |
           (static_cast<uint32_t>(qh[2]) << 16) | (static_cast<uint32_t>(qh[3]) << 24);
}

void store_qh(uint32_t bits, uint8_t qh[4]) {
    for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// 5-bit code of element j: low nibble from qs, fifth bit from qh.
int q5_code(const uint8_t qs[kHalf], uint32_t qh, int j) {
    const int nibble = j < kHalf ? (qs[j] & 0x0f) : (qs[j - kHalf] >> 4);
    return nibble | static_cast<int>(((qh >> j) & 1u) << 4);
}

// Value with the largest magnitude, keeping its sign; the first one wins ties.
float signed_absmax(const float* x) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

float absmax(const float* x) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    return amax;
}

struct MinMax {
    float min;
    float max;
};

MinMax min_max(const float* x) {
    MinMax r{FLT_MAX, -FLT_MAX};
    for (int j = 0; j < kQK; ++j) {
        r.min = std::min(r.min, x[j]);
        r.max = std::max(r.max, x[j]);
    }
    return r;
}

float inverse_or_zero(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

}  // namespace

// ---- dequantize ------------------------------------------------------------

void dequantize_q4_0(const BlockQ4_0* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
        const float d = fp16_to_fp32(blocks[i].d);
        for (int j = 0; j < kHalf; ++j) {
            dst[j] = static_cast<float>((blocks[i].qs[j] & 0x0f) - 8) * d;
            dst[j + kHalf] = static_cast<float>((blocks[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_q4_1(const BlockQ4_1* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
        const float d = fp16_to_fp32(blocks[i].d);
        const float m = fp16_to_fp32(blocks[i].m);
        for (int j = 0; j < kHalf; ++j) {
            dst[j] = static_cast<float>(blocks[i].qs[j] & 0x0f) * d + m;
            dst[j + kHalf] = static_cast<float>(blocks[i].qs[j] >> 4) * d + m;
        }
    }
}

void dequantize_q5_0(const BlockQ5_0* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
        const float d = fp16_to_fp32(blocks[i].d);
        const uint32_t qh = load_qh(blocks[i].qh);
        for (int j = 0; j < kQK; ++j) {
            dst[j] = static_cast<float>(q5_code(blocks[i].qs, qh, j) - 16) * d;
        }
    }
}

void dequantize_q5_1(const BlockQ5_1* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
        const float d = fp16_to_fp32(blocks[i].d);
        const float m = fp16_to_fp32(blocks[i].m);
        const uint32_t qh = load_qh(blocks[i].qh);
        for (int j = 0; j < kQK; ++j) {
            dst[j] = static_cast<float>(q5_code(blocks[i].qs, qh, j)) * d + m;
        }
    }
}

void dequantize_q8_0(const BlockQ8_0* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
        const float d = fp16_to_fp32(blocks[i].d);
        for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(blocks[i].qs[j]) * d;
    }
}

void dequantize_q8_1(const BlockQ8_1* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
        const float d = fp16_to_fp32(blocks[i].d);
        for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(blocks[i].qs[j]) * d;
    }
}

// ---- quantize (round to nearest, ggml's *_ref) -----------------------------
// The scale is computed in float and only then rounded to half, so codes are
// chosen with the unrounded scale, exactly as ggml does.

void quantize_q4_0(const float* src, BlockQ4_0* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
        // The extreme value maps to code 0 (-8), so the full range [-8, 7] is used.
        const float d = signed_absmax(src) / -8.0f;
        const float id = inverse_or_zero(d);
        blocks[i].d = fp32_to_fp16(d);
        for (int j = 0; j < kHalf; ++j) {
            // Truncation of x + 8.5 rounds half up, as ggml's (int8_t) cast does.
            const int q0 = std::min(15, static_cast<int>(src[j] * id + 8.5f));
            const int q1 = std::min(15, static_cast<int>(src[j + kHalf] * id + 8.5f));
            blocks[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_q4_1(const float* src, BlockQ4_1* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
        const MinMax r = min_max(src);
        const float d = (r.max - r.min) / 15.0f;
        const float id = inverse_or_zero(d);
        blocks[i].d = fp32_to_fp16(d);
        blocks[i].m = fp32_to_fp16(r.min);
        for (int j = 0; j < kHalf; ++j) {
            const int q0 = std::min(15, static_cast<int>((src[j] - r.min) * id + 0.5f));
            const int q1 = std::min(15, static_cast<int>((src[j + kHalf] - r.min) * id + 0.5f));
            blocks[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_q5_0(const float* src, BlockQ5_0* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
        const float d = signed_absmax(src) / -16.0f;
        const float id = inverse_or_zero(d);
        blocks[i].d = fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < kHalf; ++j) {
            const int q0 = std::min(31, static_cast<int>(src[j] * id + 16.5f));
            const int q1 = std::min(31, static_cast<int>(src[j + kHalf] * id + 16.5f));
            blocks[i].qs[j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
            qh |= static_cast<uint32_t>(q0 >> 4) << j;
            qh |= static_cast<uint32_t>(q1 >> 4) << (j + kHalf);
        }
        store_qh(qh, blocks[i].qh);
    }
}

void quantize_q5_1(const float* src, BlockQ5_1* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
        const MinMax r = min_max(src);
        const float d = (r.max - r.min) / 31.0f;
        const float id = inverse_or_zero(d);
        blocks[i].d = fp32_to_fp16(d);
        blocks[i].m = fp32_to_fp16(r.min);
        uint32_t qh = 0;
        for (int j = 0; j < kHalf; ++j) {
            // ggml clamps nothing here: (x - min) * id never exceeds 31.5.
            const int q0 = static_cast<int>((src[j] - r.min) * id + 0.5f);
            const int q1 = static_cast<int>((src[j + kHalf] - r.min) * id + 0.5f);
            blocks[i].qs[j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
            qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
            qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + kHalf);
        }
        store_qh(qh, blocks[i].qh);
    }
}

void quantize_q8_0(const float* src, BlockQ8_0* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
        const float d = absmax(src) / 127.0f;
        const float id = inverse_or_zero(d);
        blocks[i].d = fp32_to_fp16(d);
        // roundf: halves away from zero.
        for (int j = 0; j < kQK; ++j) {
            blocks[i].qs[j] = static_cast<int8_t>(std::round(src[j] * id));
        }
    }
}

void quantize_q8_1(const float* src, BlockQ8_1* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
        const float d = absmax(src) / 127.0f;
        const float id = inverse_or_zero(d);
        blocks[i].d = fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < kQK; ++j) {
            blocks[i].qs[j] = static_cast<int8_t>(std::round(src[j] * id));
            sum += blocks[i].qs[j];
        }
        // s uses the float d, not the half-rounded one, as ggml does.
        blocks[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

// ---- dot products ----------------------------------------------------------
// Each block's integer sum is exact; the only rounding is in the per-block
// scale products and the running float sum, which goes block 0, 1, 2, ... so
// a row's result never depends on how many rows are computed with it.

float vec_dot_q4_0_q8_0(const BlockQ4_0* w, const BlockQ8_0* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        int sumi = 0;
        for (int j = 0; j < kHalf; ++j) {
            sumi += ((w[i].qs[j] & 0x0f) - 8) * a[i].qs[j];
            sumi += ((w[i].qs[j] >> 4) - 8) * a[i].qs[j + kHalf];
        }
        sum += static_cast<float>(sumi) * fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d);
    }
    return sum;
}

float vec_dot_q4_1_q8_1(const BlockQ4_1* w, const BlockQ8_1* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        int sumi = 0;
        for (int j = 0; j < kHalf; ++j) {
            sumi += (w[i].qs[j] & 0x0f) * a[i].qs[j];
            sumi += (w[i].qs[j] >> 4) * a[i].qs[j + kHalf];
        }
        // sum_j (d_w q_j + m) * d_a a_j = d_w d_a sumi + m * s.
        sum += (fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d)) * static_cast<float>(sumi) +
               fp16_to_fp32(w[i].m) * fp16_to_fp32(a[i].s);
    }
    return sum;
}

float vec_dot_q5_0_q8_0(const BlockQ5_0* w, const BlockQ8_0* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const uint32_t qh = load_qh(w[i].qh);
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += (q5_code(w[i].qs, qh, j) - 16) * a[i].qs[j];
        sum += (fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d)) * static_cast<float>(sumi);
    }
    return sum;
}

float vec_dot_q5_1_q8_1(const BlockQ5_1* w, const BlockQ8_1* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const uint32_t qh = load_qh(w[i].qh);
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += q5_code(w[i].qs, qh, j) * a[i].qs[j];
        sum += (fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d)) * static_cast<float>(sumi) +
               fp16_to_fp32(w[i].m) * fp16_to_fp32(a[i].s);
    }
    return sum;
}

float vec_dot_q8_0_q8_0(const BlockQ8_0* w, const BlockQ8_0* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += w[i].qs[j] * a[i].qs[j];
        sum += static_cast<float>(sumi) * (fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d));
    }
    return sum;
}

}  // namespace ladder::tensor
