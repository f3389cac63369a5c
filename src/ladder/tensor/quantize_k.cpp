// Reference encoders of Q2_K .. Q6_K: ggml's quantize_row_q*_K_ref, which is
// what llama-quantize runs without an importance matrix. Sub-block scales come
// from the searches in k_quant_scales; they are then quantized against the
// super-block scale, and the codes recomputed from the rounded scales. Where a
// rounded sub-block scale is zero, ggml keeps the search's codes, and so do we.
#include <cmath>
#include <cstring>

#include "ladder/tensor/half.h"
#include "ladder/tensor/k_quant_scales.h"
#include "ladder/tensor/quant_k.h"

namespace ladder::tensor {

namespace {

constexpr int kSub16 = kQKK / 16;  // sub-blocks of 16 (Q2_K, Q3_K, Q6_K)
constexpr int kSub32 = kQKK / 32;  // sub-blocks of 32 (Q4_K, Q5_K)

int clamp_int(int l, int lo, int hi) { return l < lo ? lo : (l > hi ? hi : l); }

// Q2_K and Q3_K: element e of each 128 goes to bit plane e / 32 of byte e % 32.
void pack_two_bit_planes(const uint8_t* codes, uint8_t* qs) {
    for (int j = 0; j < kQKK; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] =
                static_cast<uint8_t>(codes[j + l] | (codes[j + l + 32] << 2) |
                                     (codes[j + l + 64] << 4) | (codes[j + l + 96] << 6));
        }
    }
}

// Q4_K / Q5_K: six-bit scale and min of sub-block j into the 12 packed bytes
// (the layout k4_scale_min in quant_k.cpp reads back).
void pack_scale_min(uint8_t scales[kKScaleBytes], int j, uint8_t ls, uint8_t lm) {
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = static_cast<uint8_t>((ls & 0x0f) | ((lm & 0x0f) << 4));
        scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
        scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
}

void unpack_scale_min(const uint8_t scales[kKScaleBytes], int j, uint8_t* ls, uint8_t* lm) {
    if (j < 4) {
        *ls = scales[j] & 63;
        *lm = scales[j + 4] & 63;
    } else {
        *ls = static_cast<uint8_t>((scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4));
        *lm = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
    }
}

// Q4_K and Q5_K share everything but the code range and the search's
// parameters: per sub-block of 32, weights av_x + |x| (av_x the RMS), a
// scale-and-min search, then six-bit scales and mins against the largest.
// Fills the block's d, dmin and scales, and the codes.
template <typename Block>
void encode_scale_min_block(const float* x, int nmax, float rmin, int nstep, Block& out,
                            uint8_t codes[kQKK]) {
    float mins[kSub32];
    float scales[kSub32];
    float weights[32];
    uint8_t scratch[32];
    float max_scale = 0.0f;  // the min is subtracted, so scales are positive
    float max_min = 0.0f;
    for (int j = 0; j < kSub32; ++j) {
        const float* xs = x + 32 * j;
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
        const float av_x = std::sqrt(sum_x2 / 32.0f);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
        scales[j] = scale_and_min_search(32, nmax, xs, weights, codes + 32 * j, &mins[j], scratch,
                                         rmin, 0.1f, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    std::memset(out.scales, 0, sizeof out.scales);
    for (int j = 0; j < kSub32; ++j) {
        // The uint8_t conversion wraps as ggml's does before the clamp.
        auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
        auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
        ls = ls < 63 ? ls : uint8_t{63};
        lm = lm < 63 ? lm : uint8_t{63};
        pack_scale_min(out.scales, j, ls, lm);
    }
    out.d = fp32_to_fp16(max_scale / 63.0f);
    out.dmin = fp32_to_fp16(max_min / 63.0f);
    for (int j = 0; j < kSub32; ++j) {
        uint8_t sc = 0;
        uint8_t m = 0;
        unpack_scale_min(out.scales, j, &sc, &m);
        const float d = fp16_to_fp32(out.d) * static_cast<float>(sc);
        if (d == 0.0f) continue;
        const float dm = fp16_to_fp32(out.dmin) * static_cast<float>(m);
        for (int ii = 0; ii < 32; ++ii) {
            codes[32 * j + ii] =
                static_cast<uint8_t>(clamp_int(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
        }
    }
}

}  // namespace

void quantize_q2_k(const float* src, BlockQ2_K* blocks, int64_t n_blocks) {
    constexpr float kQ4Scale = 15.0f;
    for (int64_t i = 0; i < n_blocks; ++i, src += kQKK) {
        BlockQ2_K& y = blocks[i];
        uint8_t codes[kQKK];
        uint8_t scratch[16];
        float weights[16];
        float mins[kSub16];
        float scales[kSub16];
        float max_scale = 0.0f;
        float max_min = 0.0f;
        for (int j = 0; j < kSub16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(src[16 * j + l]);
            scales[j] = scale_and_min_search(16, 3, src + 16 * j, weights, codes + 16 * j, &mins[j],
                                             scratch, -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0.0f) {
            const float iscale = kQ4Scale / max_scale;
            for (int j = 0; j < kSub16; ++j) {
                y.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
            }
            y.d = fp32_to_fp16(max_scale / kQ4Scale);
        } else {
            for (int j = 0; j < kSub16; ++j) y.scales[j] = 0;
            y.d = fp32_to_fp16(0.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = kQ4Scale / max_min;
            for (int j = 0; j < kSub16; ++j) {
                y.scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
            }
            y.dmin = fp32_to_fp16(max_min / kQ4Scale);
        } else {
            y.dmin = fp32_to_fp16(0.0f);
        }
        for (int j = 0; j < kSub16; ++j) {
            const float d = fp16_to_fp32(y.d) * static_cast<float>(y.scales[j] & 0x0f);
            if (d == 0.0f) continue;
            const float dm = fp16_to_fp32(y.dmin) * static_cast<float>(y.scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                codes[16 * j + ii] =
                    static_cast<uint8_t>(clamp_int(nearest_int((src[16 * j + ii] + dm) / d), 0, 3));
            }
        }
        pack_two_bit_planes(codes, y.qs);
    }
}

void quantize_q3_k(const float* src, BlockQ3_K* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQKK) {
        BlockQ3_K& y = blocks[i];
        int8_t codes[kQKK];
        float scales[kSub16];
        float max_scale = 0.0f;
        float amax = 0.0f;
        for (int j = 0; j < kSub16; ++j) {
            scales[j] = symmetric_scale_by_descent(16, 4, src + 16 * j, codes + 16 * j);
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }
        std::memset(y.scales, 0, sizeof y.scales);
        if (max_scale != 0.0f) {
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < kSub16; ++j) {
                // Stored + 32 as six bits: low nibbles in bytes 0..7 (sub-blocks
                // 8..15 in the high nibble), the top two bits in bytes 8..11.
                auto l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
                l = static_cast<int8_t>(clamp_int(l, -32, 31) + 32);
                if (j < 8) {
                    y.scales[j] = static_cast<uint8_t>(l & 0x0f);
                } else {
                    y.scales[j - 8] |= static_cast<uint8_t>((l & 0x0f) << 4);
                }
                l = static_cast<int8_t>(l >> 4);
                y.scales[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
            }
            y.d = fp32_to_fp16(1.0f / iscale);
        } else {
            y.d = fp32_to_fp16(0.0f);
        }
        for (int j = 0; j < kSub16; ++j) {
            int sc = j < 8 ? (y.scales[j] & 0x0f) : (y.scales[j - 8] >> 4);
            sc = (sc | (((y.scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
            const float d = fp16_to_fp32(y.d) * static_cast<float>(sc);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) {
                const int l = clamp_int(nearest_int(src[16 * j + ii] / d), -4, 3);
                codes[16 * j + ii] = static_cast<int8_t>(l + 4);
            }
        }
        // Codes 4..7 set their hmask bit and keep the low two bits: element j
        // sets bit j / 32 of hmask[j % 32].
        std::memset(y.hmask, 0, sizeof y.hmask);
        uint8_t low[kQKK];
        for (int j = 0; j < kQKK; ++j) {
            int code = codes[j];
            if (code > 3) {
                y.hmask[j % 32] |= static_cast<uint8_t>(1u << (j / 32));
                code -= 4;
            }
            low[j] = static_cast<uint8_t>(code);
        }
        pack_two_bit_planes(low, y.qs);
    }
}

void quantize_q4_k(const float* src, BlockQ4_K* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQKK) {
        BlockQ4_K& y = blocks[i];
        uint8_t codes[kQKK];
        encode_scale_min_block(src, 15, -1.0f, 20, y, codes);
        // Each 32 bytes hold 64 elements: the first 32 in the low nibbles.
        for (int j = 0; j < kQKK; j += 64) {
            for (int l = 0; l < 32; ++l) {
                y.qs[j / 2 + l] = static_cast<uint8_t>(codes[j + l] | (codes[j + l + 32] << 4));
            }
        }
    }
}

void quantize_q5_k(const float* src, BlockQ5_K* blocks, int64_t n_blocks) {
    for (int64_t i = 0; i < n_blocks; ++i, src += kQKK) {
        BlockQ5_K& y = blocks[i];
        uint8_t codes[kQKK];
        encode_scale_min_block(src, 31, -0.5f, 15, y, codes);
        // Low nibbles as Q4_K; the fifth bit of element e is bit e / 32 of qh[e % 32].
        std::memset(y.qh, 0, sizeof y.qh);
        for (int j = 0; j < kQKK; j += 64) {
            for (int l = 0; l < 32; ++l) {
                int l1 = codes[j + l];
                int l2 = codes[j + l + 32];
                if (l1 > 15) {
                    l1 -= 16;
                    y.qh[l] |= static_cast<uint8_t>(1u << (j / 32));
                }
                if (l2 > 15) {
                    l2 -= 16;
                    y.qh[l] |= static_cast<uint8_t>(2u << (j / 32));
                }
                y.qs[j / 2 + l] = static_cast<uint8_t>(l1 | (l2 << 4));
            }
        }
    }
}

void quantize_q6_k(const float* src, BlockQ6_K* blocks, int64_t n_blocks) {
    constexpr float kGroupMaxEps = 1e-15f;
    for (int64_t i = 0; i < n_blocks; ++i, src += kQKK) {
        BlockQ6_K& y = blocks[i];
        int8_t codes[kQKK];
        float scales[kSub16];
        float max_scale = 0.0f;
        float max_abs_scale = 0.0f;
        for (int ib = 0; ib < kSub16; ++ib) {
            const float scale =
                symmetric_scale_weighted_by_square(16, 32, src + 16 * ib, codes + 16 * ib);
            scales[ib] = scale;
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < kGroupMaxEps) {
            std::memset(&y, 0, sizeof y);
            continue;
        }
        const float iscale = -128.0f / max_scale;
        y.d = fp32_to_fp16(1.0f / iscale);
        for (int ib = 0; ib < kSub16; ++ib) {
            const int l = nearest_int(iscale * scales[ib]);
            y.scales[ib] = static_cast<int8_t>(l < 127 ? l : 127);
        }
        for (int j = 0; j < kSub16; ++j) {
            const float d = fp16_to_fp32(y.d) * static_cast<float>(y.scales[j]);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) {
                const int l = clamp_int(nearest_int(src[16 * j + ii] / d), -32, 31);
                codes[16 * j + ii] = static_cast<int8_t>(l + 32);
            }
        }
        // Per 128 elements: quarters 0 and 2 share ql[0..31] (low, high
        // nibble), quarters 1 and 3 share ql[32..63]; qh takes two bits each.
        uint8_t* ql = y.ql;
        uint8_t* qh = y.qh;
        for (int j = 0; j < kQKK; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const int q1 = codes[j + l];
                const int q2 = codes[j + l + 32];
                const int q3 = codes[j + l + 64];
                const int q4 = codes[j + l + 96];
                ql[l] = static_cast<uint8_t>((q1 & 0x0f) | ((q3 & 0x0f) << 4));
                ql[l + 32] = static_cast<uint8_t>((q2 & 0x0f) | ((q4 & 0x0f) << 4));
                qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) |
                                             ((q4 >> 4) << 6));
            }
        }
    }
}

}  // namespace ladder::tensor
