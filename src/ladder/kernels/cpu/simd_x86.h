// Small x86 SIMD helpers shared by the AVX2 and AVX-512 kernel files. Each
// carries its target attribute, so including this header keeps the rest of
// the binary baseline x86-64; call them only from code CPUID allowed.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define LADDER_AVX2 __attribute__((target("avx2,fma,f16c")))
#define LADDER_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace ladder::kernels::cpu {

LADDER_AVX2 inline float half_to_float(uint16_t h) { return _cvtsh_ss(h); }

LADDER_AVX2 inline int head_word(const char* p) {
    int v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The first dword of each of eight blocks `stride` bytes apart, in row order:
// a row group's block heads. Eight loads rather than a gather, which AMD cores
// run as microcode (about 20% of a Q4_1 decode on Zen 3).
LADDER_AVX2 inline __m256i group_heads(const char* p, size_t stride) {
    return _mm256_setr_epi32(head_word(p), head_word(p + stride), head_word(p + 2 * stride),
                             head_word(p + 3 * stride), head_word(p + 4 * stride),
                             head_word(p + 5 * stride), head_word(p + 6 * stride),
                             head_word(p + 7 * stride));
}

// Sum of 8 floats in one fixed tree, ((0+4) + (2+6)) + ((1+5) + (3+7)): the
// order every kernel and its scalar reference agree on.
LADDER_AVX2 inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// hsum of eight vectors at once: result lane k is hsum(v[k]), with
// the same pairs added in the same order, through a transpose.
LADDER_AVX2 inline __m256 sum_lanes_x8(const __m256 v[8]) {
    __m256 halves[4];  // low 128 bits: v[k] lanes (0+4, 1+5, 2+6, 3+7); high: v[k + 4]'s
    for (int k = 0; k < 4; ++k) {
        halves[k] = _mm256_add_ps(_mm256_permute2f128_ps(v[k], v[k + 4], 0x20),
                                  _mm256_permute2f128_ps(v[k], v[k + 4], 0x31));
    }
    // Per 128-bit half: (h0 + h2, h1 + h3) of two vectors side by side.
    const __m256 q01 = _mm256_add_ps(_mm256_shuffle_ps(halves[0], halves[1], 0x44),
                                     _mm256_shuffle_ps(halves[0], halves[1], 0xee));
    const __m256 q23 = _mm256_add_ps(_mm256_shuffle_ps(halves[2], halves[3], 0x44),
                                     _mm256_shuffle_ps(halves[2], halves[3], 0xee));
    // (h0 + h2) + (h1 + h3), landing in vector order 0..7.
    return _mm256_add_ps(_mm256_shuffle_ps(q01, q23, 0x88), _mm256_shuffle_ps(q01, q23, 0xdd));
}

// Hides a value from the optimizer so that a product is never contracted with
// a later add into an fma (GCC does that with intrinsics too), which would
// round differently from the reference.
LADDER_AVX2 inline __m256 opaque(__m256 v) {
    asm("" : "+x"(v));
    return v;
}

inline float opaque(float v) {
    asm("" : "+x"(v));
    return v;
}

// The same barrier for an integer running sum, for speed rather than bits:
// integer adds reassociate freely, and GCC 12 turned a K-quant tile's
// sums += madd(...) chains into all the products first and one add tree last,
// spilling a dozen vectors to the stack a super-block. Pinned after each add,
// each sum stays one register (kernels_bench's Q4_K tile about 1.3x on Zen 3).
LADDER_AVX2 inline __m256i opaque(__m256i v) {
    asm("" : "+x"(v));
    return v;
}

// 32 nibbles of a 16-byte legacy block as bytes in element order: the low
// nibbles are elements 0..15, the high nibbles elements 16..31. One load
// fills both halves and one per-dword shift moves the high half's nibbles
// down (a dword shift by 4 leaves each byte's high nibble in its low four
// bits, as a word shift does): three operations where a 128-bit load, shift
// and insert took four, about 10% of the Q4_1 decode kernel on Zen 3.
LADDER_AVX2 inline __m256i unpack_nibbles_16(const uint8_t* qs) {
    const __m256i twice =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    const __m256i both = _mm256_srlv_epi32(twice, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// Sum of unsigned u8 x signed s8 over each group of four bytes, in 8 int32
// lanes (maddubs, then madd by ones, as ggml's x86 path does). maddubs cannot
// saturate for the callers' inputs: u below 64, or |s| <= 127 with u <= 128,
// so each pair sum stays inside int16.
LADDER_AVX2 inline __m256i dot_u8_s8(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// Byte j of the result is 0x10 when bit j of the 32-bit mask is set, else 0:
// the fifth bit of each Q5_0 element, already in place.
LADDER_AVX2 inline __m256i expand_high_bits(const uint8_t qh_bytes[4]) {
    uint32_t qh = 0;
    std::memcpy(&qh, qh_bytes, sizeof qh);
    // Byte j takes source byte j / 8, then keeps bit j % 8.
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(qh)),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Q4_K sub-block j's 6-bit scale and min from the 12 packed bytes (the layout of
// ggml's get_scale_min_k4): sub-blocks 0..3 keep theirs in the low 6 bits of
// bytes j and j + 4; 4..7 split theirs over a nibble of bytes 8..11 and the top
// two bits of bytes j - 4 and j. Compiled for AVX2 like its caller: a call
// into baseline SSE code with live 256-bit state stalls on AVX-SSE transitions.
//
// Four bytes at a time in 32-bit words: five masks and shifts a word instead of
// a dozen byte operations a sub-block (the byte loop cost the Q4_K tile about
// 60 scalar instructions a super-block and row).
LADDER_AVX2 inline void unpack_q4_k_scales(const uint8_t packed[12], uint8_t scales[8],
                                           uint8_t mins[8]) {
    constexpr uint32_t kLow6 = 0x3f3f3f3f;
    constexpr uint32_t kLow4 = 0x0f0f0f0f;
    constexpr uint32_t kLow2 = 0x03030303;
    uint32_t words[3];
    std::memcpy(words, packed, sizeof words);
    const uint32_t scales_0_3 = words[0] & kLow6;
    const uint32_t mins_0_3 = words[1] & kLow6;
    const uint32_t scales_4_7 = (words[2] & kLow4) | (((words[0] >> 6) & kLow2) << 4);
    const uint32_t mins_4_7 = ((words[2] >> 4) & kLow4) | (((words[1] >> 6) & kLow2) << 4);
    std::memcpy(scales, &scales_0_3, 4);
    std::memcpy(scales + 4, &scales_4_7, 4);
    std::memcpy(mins, &mins_0_3, 4);
    std::memcpy(mins + 4, &mins_4_7, 4);
}

}  // namespace ladder::kernels::cpu
