// AVX2 block kernels (block_kernels_avx2.h) of the weight types `ladder
// quantize` makes beyond the ones vec_dot_avx2.cpp and gemm_avx2.cpp write out
// by hand: Q4_0, Q5_1 (legacy blocks of 32), Q2_K, Q3_K, Q5_K (super-blocks of
// 256) and BF16. Each step forms exact int32 lane sums (lane k of a 32-element
// block sums elements 4k .. 4k + 3) and scales them by one fused multiply-add,
// in the order of the scalar path's x86_order_dot_* (vec_dot_scalar.cpp),
// which the kernel tests hold these to bit for bit. The avx512 table keeps
// these kernels: decode streams the weights, and vpdpbusd would change only
// the integer sums, which are exact either way.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ladder/kernels/cpu/block_kernels_avx2.h"
#include "ladder/kernels/cpu/gemv.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/quant_k_codes.h"

namespace ladder::kernels::cpu {

namespace {

using tensor::kQK;
using tensor::kQKK;

LADDER_AVX2 inline __m256i load_32(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// (0 + 2) + (1 + 3) of four float lanes: the K-quants' min lanes.
LADDER_AVX2 inline float hsum_4(__m128 v) {
    const __m128 pairs = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
}

// One float accumulator of 8 lanes: the types without mins or offsets.
struct LaneAcc {
    __m256 sum;
};

// Q4_0 x Q8_0: sum((q - 8) * y) per lane from q in [0, 15] as maddubs(q, y) -
// maddubs(8, y), both exact in int16, then acc += (d_w * d_a) * lanes.
struct Q4_0Kernel {
    using Weight = tensor::BlockQ4_0;
    using Activation = tensor::BlockQ8_0;
    using Acc = LaneAcc;
    using Unpacked = __m256i;
    static constexpr int kBlockElements = kQK;

    LADDER_AVX2 static Unpacked unpack(const Weight& b) { return unpack_nibbles_16(b.qs); }
    LADDER_AVX2 static void step(const Unpacked& q, const Weight& b, const Activation& a,
                                 Acc& acc) {
        const __m256i y = load_32(a.qs);
        const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(q, y),
                                               _mm256_maddubs_epi16(_mm256_set1_epi8(8), y));
        const __m256i sums = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
        const float scale = half_to_float(b.d) * half_to_float(a.d);
        acc.sum = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(sums), acc.sum);
    }
    LADDER_AVX2 static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// Q5_1 x Q8_1: codes in [0, 31] (nibble and fifth bit), acc += (d_w * d_a) *
// lanes; offsets += m_w * s_a by one scalar fma; hsum(acc) + offsets.
struct Q5_1Kernel {
    using Weight = tensor::BlockQ5_1;
    using Activation = tensor::BlockQ8_1;
    struct Acc {
        __m256 sum;
        float offsets;
    };
    using Unpacked = __m256i;
    static constexpr int kBlockElements = kQK;

    LADDER_AVX2 static Unpacked unpack(const Weight& b) {
        return _mm256_or_si256(unpack_nibbles_16(b.qs), expand_high_bits(b.qh));
    }
    LADDER_AVX2 static void step(const Unpacked& q, const Weight& b, const Activation& a,
                                 Acc& acc) {
        const __m256i sums = dot_u8_s8(q, load_32(a.qs));
        const float scale = half_to_float(b.d) * half_to_float(a.d);
        acc.sum = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(sums), acc.sum);
        acc.offsets = std::fma(half_to_float(b.m), half_to_float(a.s), acc.offsets);
    }
    LADDER_AVX2 static float finish(const Acc& acc) { return hsum(acc.sum) + acc.offsets; }
};

// Q5_K x Q8_K: as Q4_K (vec_dot_avx2.cpp) with codes in [0, 31]. Per
// super-block: lanes of scale_s * maddubs(q, y) over the 8 sub-blocks, acc +=
// (d_a * d_w) * lanes; min lane k = min_2k * (bsum pair 2k) + min_2k+1 * (bsum
// pair 2k + 1), mins += -(d_a * dmin_w) * min lanes; hsum(acc) + hsum_4(mins).
struct Q5_KKernel {
    using Weight = tensor::BlockQ5_K;
    using Activation = tensor::BlockQ8_K;
    struct Acc {
        __m256 sum;
        __m128 mins;
    };
    struct Unpacked {
        __m256i q[8];  // sub-block s: elements 32s .. 32s + 31
        __m128i mins16;
        uint8_t scales[8];
    };
    static constexpr int kBlockElements = kQKK;

    LADDER_AVX2 static Unpacked unpack(const Weight& b) {
        Unpacked u;
        uint8_t mins[8];
        unpack_q4_k_scales(b.scales, u.scales, mins);
        uint64_t mins_bits = 0;
        std::memcpy(&mins_bits, mins, sizeof mins_bits);
        u.mins16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(mins_bits)));
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        const __m256i one = _mm256_set1_epi8(1);
        const __m256i qh = load_32(b.qh);
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles) and 2c + 1
            const __m256i packed = load_32(b.qs + 32 * c);
            // Bit s of qh byte l is the fifth bit of element 32s + l; moved to 0x10.
            const __m256i high_lo =
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4);
            const __m256i high_hi =
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4);
            u.q[2 * c] = _mm256_or_si256(_mm256_and_si256(packed, low4), high_lo);
            u.q[2 * c + 1] =
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 4), low4), high_hi);
        }
        return u;
    }
    LADDER_AVX2 static void step(const Unpacked& u, const Weight& b, const Activation& a,
                                 Acc& acc) {
        const __m256i bsums = load_32(a.bsums);
        const __m128i pair_sums =
            _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
        const __m128i min_lanes = _mm_madd_epi16(u.mins16, pair_sums);
        __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i pairs = _mm256_maddubs_epi16(u.q[s], load_32(a.qs + 32 * s));
            sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, _mm256_set1_epi16(u.scales[s])));
        }
        const float d = a.d * half_to_float(b.d);
        const float neg_dmin = -(a.d * half_to_float(b.dmin));
        acc.sum = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sums), acc.sum);
        acc.mins = _mm_fmadd_ps(_mm_set1_ps(neg_dmin), _mm_cvtepi32_ps(min_lanes), acc.mins);
    }
    LADDER_AVX2 static float finish(const Acc& acc) { return hsum(acc.sum) + hsum_4(acc.mins); }
};

// Lane sums of a super-block in groups of 16 with one int16 scale each: block
// s (32 elements) takes scales[2s] in lanes 0..3 and scales[2s + 1] in 4..7.
LADDER_AVX2 inline __m256i add_group_scaled(__m256i sums, __m256i pairs, const int16_t* scales,
                                            int s) {
    const __m256i group_scales =
        _mm256_set_m128i(_mm_set1_epi16(scales[2 * s + 1]), _mm_set1_epi16(scales[2 * s]));
    return _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, group_scales));
}

// The 2-bit codes of the 8 blocks of 32 of a Q2_K / Q3_K super-block: block s
// is bits 2 (s % 4) of the 32 bytes 32 (s / 4) ..
LADDER_AVX2 inline void unpack_two_bit_codes(const uint8_t* qs, __m256i q[8]) {
    const __m256i three = _mm256_set1_epi8(3);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        const __m256i bytes = load_32(qs + 32 * h);
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
            q[4 * h + k] = _mm256_and_si256(_mm256_srli_epi16(bytes, 2 * k), three);
        }
    }
}

// Q3_K x Q8_K: codes q2 - (high bit clear ? 4 : 0) in [-4, 3], summed as
// maddubs(q2, y) - maddubs(4 or 0, y), exact in int16; lanes times the signed
// group scales; acc += (d_a * d_w) * lanes; hsum(acc).
struct Q3_KKernel {
    using Weight = tensor::BlockQ3_K;
    using Activation = tensor::BlockQ8_K;
    using Acc = LaneAcc;
    struct Unpacked {
        __m256i q[8];     // 2-bit codes, [0, 3]
        __m256i low4[8];  // 4 where the high bit is clear, else 0
        int16_t scales[16];
    };
    static constexpr int kBlockElements = kQKK;

    LADDER_AVX2 static Unpacked unpack(const Weight& b) {
        Unpacked u;
        unpack_two_bit_codes(b.qs, u.q);
        const __m256i hmask = load_32(b.hmask);
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {  // bit s of hmask byte l: element 32s + l
            const __m256i bit =
                _mm256_and_si256(hmask, _mm256_set1_epi8(static_cast<char>(1 << s)));
            u.low4[s] = _mm256_and_si256(_mm256_cmpeq_epi8(bit, _mm256_setzero_si256()),
                                         _mm256_set1_epi8(4));
        }
        for (int g = 0; g < 16; ++g) u.scales[g] = static_cast<int16_t>(tensor::q3_k_scale(b, g));
        return u;
    }
    LADDER_AVX2 static void step(const Unpacked& u, const Weight& b, const Activation& a,
                                 Acc& acc) {
        __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i y = load_32(a.qs + 32 * s);
            const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(u.q[s], y),
                                                   _mm256_maddubs_epi16(u.low4[s], y));
            sums = add_group_scaled(sums, pairs, u.scales, s);
        }
        const float d = a.d * half_to_float(b.d);
        acc.sum = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sums), acc.sum);
    }
    LADDER_AVX2 static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// Q2_K x Q8_K, as ggml's x86 kernel orders it: per super-block first acc +=
// -(d_a * dmin_w) * min lanes (lane k: min * bsum of groups 2k and 2k + 1),
// then acc += (d_a * d_w) * the codes' lanes times the group scales; hsum(acc).
struct Q2_KKernel {
    using Weight = tensor::BlockQ2_K;
    using Activation = tensor::BlockQ8_K;
    using Acc = LaneAcc;
    struct Unpacked {
        __m256i q[8];
        __m256i mins16;  // the 16 groups' mins as int16
        int16_t scales[16];
    };
    static constexpr int kBlockElements = kQKK;

    LADDER_AVX2 static Unpacked unpack(const Weight& b) {
        Unpacked u;
        unpack_two_bit_codes(b.qs, u.q);
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
        u.mins16 =
            _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0f)));
        for (int g = 0; g < 16; ++g) u.scales[g] = static_cast<int16_t>(b.scales[g] & 0x0f);
        return u;
    }
    LADDER_AVX2 static void step(const Unpacked& u, const Weight& b, const Activation& a,
                                 Acc& acc) {
        const __m256i min_lanes = _mm256_madd_epi16(u.mins16, load_32(a.bsums));
        const float neg_dmin = -(a.d * half_to_float(b.dmin));
        acc.sum = _mm256_fmadd_ps(_mm256_set1_ps(neg_dmin), _mm256_cvtepi32_ps(min_lanes), acc.sum);
        __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i pairs = _mm256_maddubs_epi16(u.q[s], load_32(a.qs + 32 * s));
            sums = add_group_scaled(sums, pairs, u.scales, s);
        }
        const float d = a.d * half_to_float(b.d);
        acc.sum = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sums), acc.sum);
    }
    LADDER_AVX2 static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// BF16 x BF16 in chunks of 8: widening is a shift, and a product of two
// bfloat16 values is exact in float, so each fma rounds once, as the scalar
// path's. (AVX512-BF16's vdpbf16ps would sum pairs before rounding and flush
// denormals, which no scalar reference reproduces; decode streams the weights
// either way.)
struct Bf16Chunk {
    uint16_t h[8];
};

LADDER_AVX2 inline __m256 widen_bf16(const Bf16Chunk& c) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.h));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
}

struct Bf16Kernel {
    using Weight = Bf16Chunk;
    using Activation = Bf16Chunk;
    using Acc = LaneAcc;
    using Unpacked = __m256;
    static constexpr int kBlockElements = 8;

    LADDER_AVX2 static Unpacked unpack(const Weight& w) { return widen_bf16(w); }
    LADDER_AVX2 static void step(const Unpacked& x, const Weight&, const Activation& a, Acc& acc) {
        acc.sum = _mm256_fmadd_ps(x, widen_bf16(a), acc.sum);
    }
    LADDER_AVX2 static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// Whole chunks through the block kernel, then the tail in order by fma.
LADDER_AVX2 float vec_dot_bf16_bf16(const void* weights, const void* activations, int64_t n) {
    float sum = detail::block_vec_dot<Bf16Kernel>(weights, activations, n);
    const auto* w = static_cast<const uint16_t*>(weights);
    const auto* a = static_cast<const uint16_t*>(activations);
    for (int64_t i = n / 8 * 8; i < n; ++i) {
        sum = std::fma(tensor::bf16_to_fp32(w[i]), tensor::bf16_to_fp32(a[i]), sum);
    }
    return sum;
}

// As F16's (gemm_avx2.cpp): one vec_dot per output for a single activation
// row or rows with a tail, tiles of 4 weight x 2 activation rows otherwise.
void gemm_bf16_bf16(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                    const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                    int64_t n, float* out, int64_t out_stride) {
    if (n_activation_rows == 1 || n % 8 != 0) {
        detail::vec_dot_per_output<Isa::Avx2, tensor::DType::BF16>(
            weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
            n_activation_rows, n, out, out_stride);
        return;
    }
    detail::block_gemm<Bf16Kernel, 4, 2>(weights, weight_row_bytes, n_weight_rows, activations,
                                         activation_row_bytes, n_activation_rows, n, out,
                                         out_stride);
}

// Tile shapes: legacy blocks are small, so 4 weight rows x 4 activation rows
// of accumulators; a K-quant block's codes fill 8 to 16 registers, so one
// weight row at a time, as gemm_avx2.cpp's Q4_K and Q6_K tiles.
constexpr int kLegacyRows = 4;
constexpr int kKRows = 1;
constexpr int kActivationRows = 4;

}  // namespace

namespace detail {

void install_avx2_block_kernels(CpuKernels& k) {
    using tensor::DType;
    const auto set = [&k](DType type, VecDotFn dot, GemmFn gemm) {
        k.vec_dot_by_weight[static_cast<int>(type)] = dot;
        k.gemm_by_weight[static_cast<int>(type)] = gemm;
    };
    set(DType::Q4_0, block_vec_dot<Q4_0Kernel>,
        block_gemm<Q4_0Kernel, kLegacyRows, kActivationRows>);
    set(DType::Q5_1, block_vec_dot<Q5_1Kernel>,
        block_gemm<Q5_1Kernel, kLegacyRows, kActivationRows>);
    set(DType::Q2_K, block_vec_dot<Q2_KKernel>, block_gemm<Q2_KKernel, kKRows, kActivationRows>);
    set(DType::Q3_K, block_vec_dot<Q3_KKernel>, block_gemm<Q3_KKernel, kKRows, kActivationRows>);
    set(DType::Q5_K, block_vec_dot<Q5_KKernel>, block_gemm<Q5_KKernel, kKRows, kActivationRows>);
    set(DType::BF16, vec_dot_bf16_bf16, gemm_bf16_bf16);
}

}  // namespace detail

}  // namespace ladder::kernels::cpu
