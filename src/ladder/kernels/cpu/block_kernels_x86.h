// Internal to kernels/cpu: the x86 single-row dot products (VecDotFn) and
// multi-row kernels (GemmFn) of the weight types, both built from one
// per-block step, so that a new type is a block step and a row in the table,
// not a copied tile loop. Included by block_dots_avx2.cpp and
// block_dots_avx512.cpp, each under its own `#pragma GCC target` and after
// every other header, so that each compiles these templates for its own
// instruction set; everything here has internal linkage, so the two copies
// never merge.
//
// A block kernel K says, for one weight block and one activation block:
//   using Weight, Activation;             the block types
//   static constexpr int kBlockElements;  elements per block
//   struct Acc;                           one output's running state, zero
//                                         when value-initialized
//   using Unpacked;                       a weight block's codes, formed once
//   static Unpacked unpack(const Weight&);
//   struct WeightScales, ActivationScales;  a block's scales as floats
//   static WeightScales weight_scales(const Weight&);
//   static ActivationScales activation_scales(const Activation&);
//   static void step(const Unpacked&, const WeightScales&, const ActivationScales&,
//                    const Activation&, Acc&);
//   static float finish(const Acc&);
// block_vec_dot runs step over the blocks of one row pair in order; a tile
// takes each weight block's codes, unpacked once (once for all the call's
// tiles when it has several), and runs the same step for each of its
// activation rows, one Acc per output. Each output therefore sees exactly the
// operations of block_vec_dot in the same order, and the two agree bit for bit
// (gemm_tiles.h) whatever the tiling, T or thread count.
//
// The scales are apart from the codes because a multi-row call converts each
// block's scales once: the activation rows' for the whole call, a weight row
// group's once for all its tiles. Converted inside the tile, every output of
// every block paid for two half-to-float conversions and a broadcast, which
// run at one a cycle on Zen 3 (the Q5_0 tile 1.2x faster without them).
//
// Every step forms exact int32 lane sums (lane k of a 32-element block sums
// elements 4k .. 4k + 3) and scales them by one fused multiply-add, in the
// order of the scalar path's x86_order_dot_* (vec_dot_scalar.cpp), which the
// kernel tests hold every path to bit for bit. The legacy types take their
// u8 x s8 lane sums from a Lanes policy (maddubs + madd on AVX2, vpdpbusd
// with VNNI); the sums are exact either way, so the policy changes speed only.
//
// An Acc is never returned by value from a function that may stay out of
// line: with GCC 12, a row loop that returned its Acc (one __m256) from an
// out-of-line call gave Q2_K and Q3_K wrong sums, which the kernel tests
// caught; kept in the caller's frame it is right.
#pragma once

// (Included anywhere else, the intrinsics below fail to inline: a loud error.)

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "ladder/kernels/cpu/gemm_tiles.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/quant_k_codes.h"

namespace ladder::kernels::cpu {
namespace {  // NOLINT: one copy per instruction set, by design (above)

// ---- the drivers -------------------------------------------------------------

// A kernel with an offset term (K::weight_offset, K::activation_offset) adds
// to its finish() the fma chain offsets = fma(weight_offset, activation_offset,
// offsets) over the blocks in order; one without has none.
template <typename K>
concept HasOffsets = requires(const typename K::Weight& w, const typename K::Activation& a) {
    K::weight_offset(w);
    K::activation_offset(a);
};

template <typename K>
float block_vec_dot(const void* weights, const void* activations, int64_t n) {
    const auto* w = static_cast<const typename K::Weight*>(weights);
    const auto* a = static_cast<const typename K::Activation*>(activations);
    typename K::Acc acc{};
    float offsets = 0.0f;
    for (int64_t i = 0; i < n / K::kBlockElements; ++i) {
        K::step(K::unpack(w[i]), K::weight_scales(w[i]), K::activation_scales(a[i]), a[i], acc);
        if constexpr (HasOffsets<K>) {
            offsets = std::fma(K::weight_offset(w[i]), K::activation_offset(a[i]), offsets);
        }
    }
    if constexpr (HasOffsets<K>) return K::finish(acc) + offsets;
    return K::finish(acc);
}

// A weight block's unpacked codes, kept. (A struct aligned by hand: compiled
// under `#pragma GCC target` without -mavx on the command line, GCC aligns
// __m256i to 16 bytes, and the allocator would give 16-byte storage to
// 32-byte stores.)
template <typename K>
struct alignas(32) Codes {
    typename K::Unpacked value;
};

// kKeptCodes: the weight rows' codes come unpacked in w_codes (block_gemm
// keeps them when a weight-row group meets more than one tile); otherwise
// each tile unpacks them and w_codes is unused.
template <typename K, int kT, bool kKeptCodes>
struct BlockTiles {
    using WeightScales = typename K::WeightScales;
    using ActivationScales = typename K::ActivationScales;

    template <int kRowsW, int kRows>
    struct Tile {
        static void run(const typename K::Weight* const* w, const WeightScales* const* w_scales,
                        const Codes<K>* const* w_codes, const typename K::Activation* const* a,
                        const ActivationScales* const* a_scales, int64_t n_blocks,
                        float (*res)[kT]) {
            typename K::Acc acc[kRowsW][kRows] = {};
            for (int64_t i = 0; i < n_blocks; ++i) {
#pragma GCC unroll 8
                for (int j = 0; j < kRowsW; ++j) {
                    const typename K::Unpacked codes = [&] {
                        if constexpr (kKeptCodes)
                            return w_codes[j][i].value;
                        else
                            return K::unpack(w[j][i]);
                    }();
#pragma GCC unroll 8
                    for (int t = 0; t < kRows; ++t) {
                        K::step(codes, w_scales[j][i], a_scales[t][i], a[t][i], acc[j][t]);
                    }
                }
            }
#pragma GCC unroll 8
            for (int j = 0; j < kRowsW; ++j) {
#pragma GCC unroll 8
                for (int t = 0; t < kRows; ++t) res[j][t] = K::finish(acc[j][t]);
            }
        }
    };
};

// Each row's blocks' scales, by convert(block), into scales[0 .. n_blocks).
template <typename Block, typename Scales, typename Convert>
void convert_scales(const Block* row, int64_t n_blocks, Scales* scales, Convert convert) {
    if constexpr (!std::is_empty_v<Scales>) {
        for (int64_t i = 0; i < n_blocks; ++i) scales[i] = convert(row[i]);
    }
}

// out[t][r] += the offset term of weight row r and activation row t, for
// every pair, eight weight rows a vector: lane k runs row r + k's own fma
// chain over the blocks, so each output gets the bits block_vec_dot adds.
template <typename K>
void add_offsets(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                 const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                 int64_t n_blocks, float* out, int64_t out_stride) {
    using W = typename K::Weight;
    using A = typename K::Activation;
    const int64_t n_vector_rows = (n_weight_rows + 7) / 8 * 8;
    // Block-major, so weight rows r .. r + 7 of a block are one load.
    thread_local std::vector<float> w_offsets;
    thread_local std::vector<float> a_offsets;
    w_offsets.assign(static_cast<size_t>(n_blocks * n_vector_rows), 0.0f);
    a_offsets.resize(static_cast<size_t>(n_blocks));
    for (int64_t r = 0; r < n_weight_rows; ++r) {
        const W* row = detail::block_row<W>(weights, weight_row_bytes, r);
        for (int64_t i = 0; i < n_blocks; ++i) {
            w_offsets[static_cast<size_t>(i * n_vector_rows + r)] = K::weight_offset(row[i]);
        }
    }
    for (int64_t t = 0; t < n_activation_rows; ++t) {
        const A* row = detail::block_row<A>(activations, activation_row_bytes, t);
        for (int64_t i = 0; i < n_blocks; ++i)
            a_offsets[static_cast<size_t>(i)] = K::activation_offset(row[i]);
        float* out_row = out + t * out_stride;
        for (int64_t r = 0; r < n_weight_rows; r += 8) {
            __m256 offsets = _mm256_setzero_ps();
            for (int64_t i = 0; i < n_blocks; ++i) {
                offsets = _mm256_fmadd_ps(
                    _mm256_loadu_ps(&w_offsets[static_cast<size_t>(i * n_vector_rows + r)]),
                    _mm256_broadcast_ss(&a_offsets[static_cast<size_t>(i)]), offsets);
            }
            alignas(32) float lanes[8];
            _mm256_store_ps(lanes, offsets);
            for (int64_t k = 0; k < std::min<int64_t>(8, n_weight_rows - r); ++k)
                out_row[r + k] += lanes[k];
        }
    }
}

// The GemmFn of K: tiles of kW weight rows x up to kT activation rows. With
// one activation row (decode) the kW rows are kW independent chains of
// fused multiply-adds, where one vec_dot per row would wait on one. The
// activation rows' scales are converted once for the call, a weight row
// group's once for all its tiles (the comment at the top says why).
template <typename K, int kW, int kT>
void block_gemm(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                const void* activations, size_t activation_row_bytes, int64_t n_activation_rows,
                int64_t n, float* out, int64_t out_stride) {
    using W = typename K::Weight;
    using A = typename K::Activation;
    using WeightScales = typename K::WeightScales;
    using ActivationScales = typename K::ActivationScales;
    static constexpr auto kTiles =
        detail::make_tile_table<W, A, kW, kT, BlockTiles<K, kT, false>::template Tile>(
            std::make_index_sequence<kT>{});
    static constexpr auto kKeptCodeTiles =
        detail::make_tile_table<W, A, kW, kT, BlockTiles<K, kT, true>::template Tile>(
            std::make_index_sequence<kT>{});
    // A weight-row group meets every activation tile: unpacked once for all
    // of them when there are several. (Q5_0's five-bit unpack was a quarter
    // of its tile's instructions; kept, a Gemma 3 prompt spent 15% fewer
    // samples in that tile on Zen 3.)
    const bool keep_codes = n_activation_rows > kT;
    const int64_t n_blocks = n / K::kBlockElements;
    const auto n_scales = static_cast<size_t>(n_blocks);
    // Per thread and kernel; their capacity stays at the widest call's.
    thread_local std::vector<ActivationScales> a_scales;
    thread_local std::vector<WeightScales> w_scales;
    thread_local std::vector<Codes<K>> w_codes;
    a_scales.resize(static_cast<size_t>(n_activation_rows) * n_scales);
    w_scales.resize(static_cast<size_t>(kW) * n_scales);
    if (keep_codes) w_codes.resize(static_cast<size_t>(kW) * n_scales);
    for (int64_t t = 0; t < n_activation_rows; ++t) {
        convert_scales(detail::block_row<A>(activations, activation_row_bytes, t), n_blocks,
                       a_scales.data() + static_cast<size_t>(t) * n_scales, K::activation_scales);
    }
    const WeightScales* w_rows[kW];
    const Codes<K>* code_rows[kW];
    for (int j = 0; j < kW; ++j) {
        w_rows[j] = w_scales.data() + static_cast<size_t>(j) * n_scales;
        code_rows[j] = keep_codes ? w_codes.data() + static_cast<size_t>(j) * n_scales : nullptr;
    }
    detail::for_each_tile<W, A, kW, kT>(
        weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
        n_activation_rows, out, out_stride,
        [&](const W* const* w) {
            for (int j = 0; j < kW; ++j) {
                convert_scales(w[j], n_blocks, w_scales.data() + static_cast<size_t>(j) * n_scales,
                               K::weight_scales);
                if (!keep_codes) continue;
                Codes<K>* codes = w_codes.data() + static_cast<size_t>(j) * n_scales;
                for (int64_t i = 0; i < n_blocks; ++i) codes[i].value = K::unpack(w[j][i]);
            }
        },
        [&](const W* const* w, const A* const* a, int64_t t0, int64_t n_t, float(*res)[kT]) {
            const ActivationScales* a_rows[kT] = {};
            for (int64_t t = 0; t < n_t; ++t) {
                a_rows[t] = a_scales.data() + static_cast<size_t>(t0 + t) * n_scales;
            }
            const auto& tiles = keep_codes ? kKeptCodeTiles : kTiles;
            tiles[static_cast<size_t>(n_t - 1)](w, w_rows, code_rows, a, a_rows, n_blocks, res);
        });
    if constexpr (HasOffsets<K>) {
        add_offsets<K>(weights, weight_row_bytes, n_weight_rows, activations, activation_row_bytes,
                       n_activation_rows, n_blocks, out, out_stride);
    }
}

// Tile shapes: legacy blocks are small, so 2 weight rows x 4 activation rows
// of accumulators; a K-quant block's codes fill 8 to 16 registers, so one
// weight row at a time.
constexpr int kLegacyRows = 2;
constexpr int kKRows = 1;
constexpr int kActivationRows = 4;

// ---- shared pieces -------------------------------------------------------------

inline __m256i load_32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// (0 + 2) + (1 + 3) of four float lanes: the K-quants' min lanes.
inline float hsum_4(__m128 v) {
    const __m128 pairs = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
}

// One float accumulator of 8 lanes: the types without mins or offsets.
struct LaneAcc {
    __m256 sum;
};

// w * a in every lane: the scalar product's bits, with no broadcast of it
// (each factor is broadcast from memory, a load).
inline __m256 scale_product(const float& w, const float& a) {
    return _mm256_mul_ps(_mm256_broadcast_ss(&w), _mm256_broadcast_ss(&a));
}

// acc += scale * lanes, by one fma.
inline void add_scaled(LaneAcc& acc, __m256 scale, __m256i lanes) {
    acc.sum = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(lanes), acc.sum);
}

// One float scale a block: a legacy block's half d converted, a Q8_K
// block's float d as it is.
struct BlockScale {
    float d;
};
template <typename Block>
BlockScale half_scale(const Block& b) {
    return {half_to_float(b.d)};
}
inline BlockScale q8_k_scale(const tensor::BlockQ8_K& a) { return {a.d}; }

// A K-quant super-block's d and dmin, as floats.
struct DminScales {
    float d;
    float dmin;
};
template <typename Block>
DminScales dmin_scales(const Block& b) {
    return {half_to_float(b.d), half_to_float(b.dmin)};
}

// ---- legacy blocks of 32 ---------------------------------------------------------

// The codes of a legacy block in [0, 15] or [0, 31], element order.
inline __m256i q4_codes(const uint8_t* qs) { return unpack_nibbles_16(qs); }

inline __m256i q5_codes(const uint8_t* qs, const uint8_t* qh) {
    return _mm256_or_si256(unpack_nibbles_16(qs), expand_high_bits(qh));
}

// Q4_0 and Q5_0 x Q8_0: x = d * (q - kOffset); lanes sum((q - kOffset) * y)
// with q unsigned, acc += (d_w * d_a) * lanes; hsum(acc).
template <typename Lanes, typename Block, int kOffset>
struct CenteredKernel {
    using Weight = Block;
    using Activation = tensor::BlockQ8_0;
    using Acc = LaneAcc;
    using Unpacked = __m256i;
    static constexpr int kBlockElements = tensor::kQK;

    using WeightScales = BlockScale;
    using ActivationScales = BlockScale;
    static constexpr auto weight_scales = half_scale<Weight>;
    static constexpr auto activation_scales = half_scale<Activation>;

    static Unpacked unpack(const Weight& b) {
        if constexpr (kOffset == 8)
            return q4_codes(b.qs);
        else
            return q5_codes(b.qs, b.qh);
    }
    static void step(const Unpacked& q, const WeightScales& ws, const ActivationScales& as,
                     const Activation& a, Acc& acc) {
        const __m256i lanes = Lanes::dot_centered(q, _mm256_set1_epi8(kOffset), load_32(a.qs));
        add_scaled(acc, scale_product(ws.d, as.d), lanes);
    }
    static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// Q4_1 and Q5_1 x Q8_1: x = d * q + m; acc += (d_w * d_a) * lanes(q * y);
// offsets += m_w * s_a by one scalar fma; hsum(acc) + offsets. The offsets
// chain never meets the codes, so it is a kernel's offset term (the drivers
// run it beside the steps; block_gemm eight outputs a vector).
template <typename Lanes, typename Block, bool kFiveBit>
struct OffsetKernel {
    using Weight = Block;
    using Activation = tensor::BlockQ8_1;
    using Acc = LaneAcc;
    using Unpacked = __m256i;
    static constexpr int kBlockElements = tensor::kQK;
    using WeightScales = BlockScale;
    using ActivationScales = BlockScale;
    static constexpr auto weight_scales = half_scale<Weight>;
    static constexpr auto activation_scales = half_scale<Activation>;
    static float weight_offset(const Weight& b) { return half_to_float(b.m); }
    static float activation_offset(const Activation& a) { return half_to_float(a.s); }

    static Unpacked unpack(const Weight& b) {
        if constexpr (kFiveBit)
            return q5_codes(b.qs, b.qh);
        else
            return q4_codes(b.qs);
    }
    static void step(const Unpacked& q, const WeightScales& ws, const ActivationScales& as,
                     const Activation& a, Acc& acc) {
        add_scaled(acc, scale_product(ws.d, as.d), Lanes::dot(q, load_32(a.qs)));
    }
    static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// Q8_0 x Q8_0: the u8 x s8 sums from |x| and y carrying x's sign (|x| <= 128,
// so the pairs stay in int16); acc += (d_w * d_a) * lanes; hsum(acc).
template <typename Lanes>
struct Q8_0Kernel {
    using Weight = tensor::BlockQ8_0;
    using Activation = tensor::BlockQ8_0;
    using Acc = LaneAcc;
    using Unpacked = __m256i;
    static constexpr int kBlockElements = tensor::kQK;

    using WeightScales = BlockScale;
    using ActivationScales = BlockScale;
    static constexpr auto weight_scales = half_scale<Weight>;
    static constexpr auto activation_scales = half_scale<Activation>;

    static Unpacked unpack(const Weight& b) { return load_32(b.qs); }
    static void step(const Unpacked& x, const WeightScales& ws, const ActivationScales& as,
                     const Activation& a, Acc& acc) {
        const __m256i lanes =
            Lanes::dot(_mm256_sign_epi8(x, x), _mm256_sign_epi8(load_32(a.qs), x));
        add_scaled(acc, scale_product(ws.d, as.d), lanes);
    }
    static float finish(const Acc& acc) { return hsum(acc.sum); }
};

template <typename Lanes>
using Q4_0Kernel = CenteredKernel<Lanes, tensor::BlockQ4_0, 8>;
template <typename Lanes>
using Q5_0Kernel = CenteredKernel<Lanes, tensor::BlockQ5_0, 16>;
template <typename Lanes>
using Q4_1Kernel = OffsetKernel<Lanes, tensor::BlockQ4_1, false>;
template <typename Lanes>
using Q5_1Kernel = OffsetKernel<Lanes, tensor::BlockQ5_1, true>;

// ---- K-quants: super-blocks of 256 ------------------------------------------------
// Their sub-block scales multiply int16 pair sums (maddubs, then madd by the
// scales), which vpdpbusd has no form for, so they take no Lanes policy.

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
    static constexpr int kBlockElements = tensor::kQKK;
    using WeightScales = DminScales;
    using ActivationScales = BlockScale;
    static constexpr auto weight_scales = dmin_scales<Weight>;
    static constexpr auto activation_scales = q8_k_scale;

    static Unpacked unpack(const Weight& b) {
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
    static void step(const Unpacked& u, const WeightScales& ws, const ActivationScales& as,
                     const Activation& a, Acc& acc) {
        const __m256i bsums = load_32(a.bsums);
        const __m128i pair_sums =
            _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
        const __m128i min_lanes = _mm_madd_epi16(u.mins16, pair_sums);
        __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i pairs = _mm256_maddubs_epi16(u.q[s], load_32(a.qs + 32 * s));
            sums = opaque(
                _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, _mm256_set1_epi16(u.scales[s]))));
        }
        const float neg_dmin = -(as.d * ws.dmin);
        acc.sum = _mm256_fmadd_ps(scale_product(ws.d, as.d), _mm256_cvtepi32_ps(sums), acc.sum);
        acc.mins = _mm_fmadd_ps(_mm_set1_ps(neg_dmin), _mm_cvtepi32_ps(min_lanes), acc.mins);
    }
    static float finish(const Acc& acc) { return hsum(acc.sum) + hsum_4(acc.mins); }
};

// Lane sums of a super-block in groups of 16 with one int16 scale each: block
// s (32 elements) takes scales[2s] in lanes 0..3 and scales[2s + 1] in 4..7.
inline __m256i add_group_scaled(__m256i sums, __m256i pairs, const int16_t* scales, int s) {
    const __m256i group_scales =
        _mm256_set_m128i(_mm_set1_epi16(scales[2 * s + 1]), _mm_set1_epi16(scales[2 * s]));
    return opaque(_mm256_add_epi32(sums, _mm256_madd_epi16(pairs, group_scales)));
}

// The 2-bit codes of the 8 blocks of 32 of a Q2_K / Q3_K super-block: block s
// is bits 2 (s % 4) of the 32 bytes 32 (s / 4) ..
inline void unpack_two_bit_codes(const uint8_t* qs, __m256i q[8]) {
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
    static constexpr int kBlockElements = tensor::kQKK;
    using WeightScales = BlockScale;
    using ActivationScales = BlockScale;
    static constexpr auto weight_scales = half_scale<Weight>;
    static constexpr auto activation_scales = q8_k_scale;

    static Unpacked unpack(const Weight& b) {
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
    static void step(const Unpacked& u, const WeightScales& ws, const ActivationScales& as,
                     const Activation& a, Acc& acc) {
        __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i y = load_32(a.qs + 32 * s);
            const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(u.q[s], y),
                                                   _mm256_maddubs_epi16(u.low4[s], y));
            sums = add_group_scaled(sums, pairs, u.scales, s);
        }
        add_scaled(acc, scale_product(ws.d, as.d), sums);
    }
    static float finish(const Acc& acc) { return hsum(acc.sum); }
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
    static constexpr int kBlockElements = tensor::kQKK;
    using WeightScales = DminScales;
    using ActivationScales = BlockScale;
    static constexpr auto weight_scales = dmin_scales<Weight>;
    static constexpr auto activation_scales = q8_k_scale;

    static Unpacked unpack(const Weight& b) {
        Unpacked u;
        unpack_two_bit_codes(b.qs, u.q);
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
        u.mins16 =
            _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0f)));
        for (int g = 0; g < 16; ++g) u.scales[g] = static_cast<int16_t>(b.scales[g] & 0x0f);
        return u;
    }
    static void step(const Unpacked& u, const WeightScales& ws, const ActivationScales& as,
                     const Activation& a, Acc& acc) {
        add_scaled(acc, _mm256_set1_ps(-(as.d * ws.dmin)),
                   _mm256_madd_epi16(u.mins16, load_32(a.bsums)));
        __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i pairs = _mm256_maddubs_epi16(u.q[s], load_32(a.qs + 32 * s));
            sums = add_group_scaled(sums, pairs, u.scales, s);
        }
        add_scaled(acc, scale_product(ws.d, as.d), sums);
    }
    static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// ---- BF16 ----------------------------------------------------------------------------
// In chunks of 8: widening is a shift, and a product of two bfloat16 values
// is exact in float, so each fma rounds once, as the scalar path's.
// (AVX512-BF16's vdpbf16ps sums pairs before rounding and flushes denormals,
// which no scalar reference reproduces; decode streams the weights either way.)
struct Bf16Chunk {
    uint16_t h[8];
};

inline __m256 widen_bf16(const Bf16Chunk& c) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.h));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
}

// Unscaled: its scales are empty, and block_gemm converts none.
struct NoScales {};

struct Bf16Kernel {
    using Weight = Bf16Chunk;
    using Activation = Bf16Chunk;
    using Acc = LaneAcc;
    using Unpacked = __m256;
    static constexpr int kBlockElements = 8;
    using WeightScales = NoScales;
    using ActivationScales = NoScales;
    static NoScales weight_scales(const Weight&) { return {}; }
    static NoScales activation_scales(const Activation&) { return {}; }

    static Unpacked unpack(const Weight& w) { return widen_bf16(w); }
    static void step(const Unpacked& x, const NoScales&, const NoScales&, const Activation& a,
                     Acc& acc) {
        acc.sum = _mm256_fmadd_ps(x, widen_bf16(a), acc.sum);
    }
    static float finish(const Acc& acc) { return hsum(acc.sum); }
};

// Whole chunks through the block kernel, then the tail in order by fma.
inline float vec_dot_bf16_bf16(const void* weights, const void* activations, int64_t n) {
    float sum = block_vec_dot<Bf16Kernel>(weights, activations, n);
    const auto* w = static_cast<const uint16_t*>(weights);
    const auto* a = static_cast<const uint16_t*>(activations);
    for (int64_t i = n / 8 * 8; i < n; ++i) {
        sum = std::fma(tensor::bf16_to_fp32(w[i]), tensor::bf16_to_fp32(a[i]), sum);
    }
    return sum;
}

// As F16's (gemm_avx2.cpp): one vec_dot per output for a single activation
// row, whose one stream per row is faster there, or rows with a tail; tiles
// of 4 weight x 2 activation rows otherwise.
inline void gemm_bf16_bf16(const void* weights, size_t weight_row_bytes, int64_t n_weight_rows,
                           const void* activations, size_t activation_row_bytes,
                           int64_t n_activation_rows, int64_t n, float* out, int64_t out_stride) {
    const auto* w = static_cast<const char*>(weights);
    const auto* a = static_cast<const char*>(activations);
    if (n_activation_rows == 1 || n % 8 != 0) {
        for (int64_t r = 0; r < n_weight_rows; ++r) {
            for (int64_t t = 0; t < n_activation_rows; ++t) {
                out[t * out_stride + r] =
                    vec_dot_bf16_bf16(w + static_cast<size_t>(r) * weight_row_bytes,
                                      a + static_cast<size_t>(t) * activation_row_bytes, n);
            }
        }
        return;
    }
    block_gemm<Bf16Kernel, 4, 2>(weights, weight_row_bytes, n_weight_rows, activations,
                                 activation_row_bytes, n_activation_rows, n, out, out_stride);
}

// ---- the table rows ---------------------------------------------------------------------

// The vec_dot and multi-row kernel of every type above, into one table; the
// caller composes the legacy types' multi-row kernels with its decode kernels.
template <typename Lanes>
void install_block_kernels(CpuKernels& k) {
    using tensor::DType;
    const auto set = [&k](DType type, VecDotFn dot, GemmFn gemm) {
        k.vec_dot_by_weight[static_cast<int>(type)] = dot;
        k.gemm_by_weight[static_cast<int>(type)] = gemm;
    };
    set(DType::Q4_0, block_vec_dot<Q4_0Kernel<Lanes>>,
        block_gemm<Q4_0Kernel<Lanes>, kLegacyRows, kActivationRows>);
    set(DType::Q4_1, block_vec_dot<Q4_1Kernel<Lanes>>,
        block_gemm<Q4_1Kernel<Lanes>, kLegacyRows, kActivationRows>);
    set(DType::Q5_0, block_vec_dot<Q5_0Kernel<Lanes>>,
        block_gemm<Q5_0Kernel<Lanes>, kLegacyRows, kActivationRows>);
    set(DType::Q5_1, block_vec_dot<Q5_1Kernel<Lanes>>,
        block_gemm<Q5_1Kernel<Lanes>, kLegacyRows, kActivationRows>);
    set(DType::Q8_0, block_vec_dot<Q8_0Kernel<Lanes>>,
        block_gemm<Q8_0Kernel<Lanes>, kLegacyRows, kActivationRows>);
    set(DType::Q2_K, block_vec_dot<Q2_KKernel>, block_gemm<Q2_KKernel, kKRows, kActivationRows>);
    set(DType::Q3_K, block_vec_dot<Q3_KKernel>, block_gemm<Q3_KKernel, kKRows, kActivationRows>);
    set(DType::Q5_K, block_vec_dot<Q5_KKernel>, block_gemm<Q5_KKernel, kKRows, kActivationRows>);
    set(DType::BF16, vec_dot_bf16_bf16, gemm_bf16_bf16);
}

}  // namespace
}  // namespace ladder::kernels::cpu
