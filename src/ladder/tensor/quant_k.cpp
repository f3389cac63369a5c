// Scalar reference for Q2_K .. Q6_K and Q8_K. Codes are read one element at a
// time through small decoders (element e of a super-block, 0 <= e < 256), so
// the bit layout is written down once and shared by dequantize and dot.
#include "ladder/tensor/quant_k.h"

#include <algorithm>
#include <cmath>

#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_k_codes.h"

namespace ladder::tensor {

namespace {

// Integer dot of activations with codes over one sub-block [begin, begin + n).
template <typename CodeOf>
int sub_block_dot(const int8_t* a, int begin, int n, CodeOf code_of) {
    int sum = 0;
    for (int e = begin; e < begin + n; ++e) sum += code_of(e) * a[e];
    return sum;
}

}  // namespace

// ---- dequantize ------------------------------------------------------------
// Per sub-block scale products are formed first (d * scale, dmin * min) and
// then applied per element, the same float operations as ggml's dequantize.

void dequantize_q2_k(const BlockQ2_K* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQKK) {
        const BlockQ2_K& b = blocks[i];
        const float d = fp16_to_fp32(b.d);
        const float dmin = fp16_to_fp32(b.dmin);
        for (int sub = 0; sub < 16; ++sub) {
            const float dl = d * static_cast<float>(b.scales[sub] & 0x0f);
            const float ml = dmin * static_cast<float>(b.scales[sub] >> 4);
            for (int e = 16 * sub; e < 16 * sub + 16; ++e) {
                dst[e] = dl * static_cast<float>(q2_k_code(b, e)) - ml;
            }
        }
    }
}

void dequantize_q3_k(const BlockQ3_K* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQKK) {
        const BlockQ3_K& b = blocks[i];
        const float d = fp16_to_fp32(b.d);
        for (int sub = 0; sub < 16; ++sub) {
            const float dl = d * static_cast<float>(q3_k_scale(b, sub));
            for (int e = 16 * sub; e < 16 * sub + 16; ++e) {
                dst[e] = dl * static_cast<float>(q3_k_code(b, e));
            }
        }
    }
}

void dequantize_q4_k(const BlockQ4_K* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQKK) {
        const BlockQ4_K& b = blocks[i];
        const float d = fp16_to_fp32(b.d);
        const float dmin = fp16_to_fp32(b.dmin);
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin sm = k4_scale_min(b.scales, sub);
            const float dl = d * static_cast<float>(sm.scale);
            const float ml = dmin * static_cast<float>(sm.min);
            for (int e = 32 * sub; e < 32 * sub + 32; ++e) {
                dst[e] = dl * static_cast<float>(q4_k_code(b.qs, e)) - ml;
            }
        }
    }
}

void dequantize_q5_k(const BlockQ5_K* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQKK) {
        const BlockQ5_K& b = blocks[i];
        const float d = fp16_to_fp32(b.d);
        const float dmin = fp16_to_fp32(b.dmin);
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin sm = k4_scale_min(b.scales, sub);
            const float dl = d * static_cast<float>(sm.scale);
            const float ml = dmin * static_cast<float>(sm.min);
            for (int e = 32 * sub; e < 32 * sub + 32; ++e) {
                dst[e] = dl * static_cast<float>(q5_k_code(b, e)) - ml;
            }
        }
    }
}

void dequantize_q6_k(const BlockQ6_K* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQKK) {
        const BlockQ6_K& b = blocks[i];
        const float d = fp16_to_fp32(b.d);
        for (int sub = 0; sub < 16; ++sub) {
            const float dl = d * static_cast<float>(b.scales[sub]);
            for (int e = 16 * sub; e < 16 * sub + 16; ++e) {
                dst[e] = dl * static_cast<float>(q6_k_code(b, e));
            }
        }
    }
}

void dequantize_q8_k(const BlockQ8_K* blocks, float* dst, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, dst += kQKK) {
        for (int e = 0; e < kQKK; ++e) dst[e] = blocks[i].d * static_cast<float>(blocks[i].qs[e]);
    }
}

// ---- quantize --------------------------------------------------------------

void quantize_q8_k(const float* src, BlockQ8_K* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQKK) {
        BlockQ8_K& b = blocks[i];
        // The value of largest magnitude (first one on ties) maps to -127.
        float amax = 0.0f;
        float max = 0.0f;
        for (int e = 0; e < kQKK; ++e) {
            if (std::fabs(src[e]) > amax) {
                amax = std::fabs(src[e]);
                max = src[e];
            }
        }
        if (amax == 0.0f) {
            b = BlockQ8_K{};
            continue;
        }
        const float iscale = -127.0f / max;
        for (int e = 0; e < kQKK; ++e) {
            // nearbyint rounds halves to even (default rounding mode), which is
            // what ggml's nearest_int magic-number addition computes.
            const int q = static_cast<int>(std::nearbyint(iscale * src[e]));
            b.qs[e] = static_cast<int8_t>(std::min(127, q));
        }
        for (int sub = 0; sub < kQKK / 16; ++sub) {
            int sum = 0;
            for (int e = 16 * sub; e < 16 * sub + 16; ++e) sum += b.qs[e];
            b.bsums[sub] = static_cast<int16_t>(sum);
        }
        b.d = 1.0f / iscale;
    }
}

// ---- dot products ----------------------------------------------------------
// Order, for batch invariance and reproducibility: for each super-block in
// increasing order, an exact int32 sum over sub-blocks (scale * integer dot)
// and, for types with mins, an exact int32 sum of bsums * min; then
// sum += (d_w * d_a) * isum [- (dmin_w * d_a) * isum_mins]. For Q2_K this is
// ggml's generic code exactly; for Q3_K .. Q6_K ggml's generic code spreads
// the float part over 8 lanes, so results differ from it by float rounding.

float vec_dot_q2_k_q8_k(const BlockQ2_K* w, const BlockQ8_K* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const BlockQ2_K& b = w[i];
        int isum = 0;
        int isum_mins = 0;
        for (int sub = 0; sub < 16; ++sub) {
            const auto code = [&b](int e) { return q2_k_code(b, e); };
            isum += (b.scales[sub] & 0x0f) * sub_block_dot(a[i].qs, 16 * sub, 16, code);
            isum_mins += (b.scales[sub] >> 4) * a[i].bsums[sub];
        }
        const float dall = a[i].d * fp16_to_fp32(b.d);
        const float dmin = a[i].d * fp16_to_fp32(b.dmin);
        sum += dall * static_cast<float>(isum) - dmin * static_cast<float>(isum_mins);
    }
    return sum;
}

float vec_dot_q3_k_q8_k(const BlockQ3_K* w, const BlockQ8_K* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const BlockQ3_K& b = w[i];
        int isum = 0;
        for (int sub = 0; sub < 16; ++sub) {
            const auto code = [&b](int e) { return q3_k_code(b, e); };
            isum += q3_k_scale(b, sub) * sub_block_dot(a[i].qs, 16 * sub, 16, code);
        }
        sum += (fp16_to_fp32(b.d) * a[i].d) * static_cast<float>(isum);
    }
    return sum;
}

float vec_dot_q4_k_q8_k(const BlockQ4_K* w, const BlockQ8_K* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const BlockQ4_K& b = w[i];
        int isum = 0;
        int isum_mins = 0;
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin sm = k4_scale_min(b.scales, sub);
            const auto code = [&b](int e) { return q4_k_code(b.qs, e); };
            isum += sm.scale * sub_block_dot(a[i].qs, 32 * sub, 32, code);
            isum_mins += sm.min * (a[i].bsums[2 * sub] + a[i].bsums[2 * sub + 1]);
        }
        const float d = fp16_to_fp32(b.d) * a[i].d;
        const float dmin = fp16_to_fp32(b.dmin) * a[i].d;
        sum += d * static_cast<float>(isum) - dmin * static_cast<float>(isum_mins);
    }
    return sum;
}

float vec_dot_q5_k_q8_k(const BlockQ5_K* w, const BlockQ8_K* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const BlockQ5_K& b = w[i];
        int isum = 0;
        int isum_mins = 0;
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin sm = k4_scale_min(b.scales, sub);
            const auto code = [&b](int e) { return q5_k_code(b, e); };
            isum += sm.scale * sub_block_dot(a[i].qs, 32 * sub, 32, code);
            isum_mins += sm.min * (a[i].bsums[2 * sub] + a[i].bsums[2 * sub + 1]);
        }
        const float d = fp16_to_fp32(b.d) * a[i].d;
        const float dmin = fp16_to_fp32(b.dmin) * a[i].d;
        sum += d * static_cast<float>(isum) - dmin * static_cast<float>(isum_mins);
    }
    return sum;
}

float vec_dot_q6_k_q8_k(const BlockQ6_K* w, const BlockQ8_K* a, int64_t n_blocks) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const BlockQ6_K& b = w[i];
        int isum = 0;
        for (int sub = 0; sub < 16; ++sub) {
            const auto code = [&b](int e) { return q6_k_code(b, e); };
            isum += b.scales[sub] * sub_block_dot(a[i].qs, 16 * sub, 16, code);
        }
        sum += (fp16_to_fp32(b.d) * a[i].d) * static_cast<float>(isum);
    }
    return sum;
}

}  // namespace ladder::tensor
