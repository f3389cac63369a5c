// Element decoders of the Q2_K .. Q6_K bit layouts (element e of a
// super-block, 0 <= e < 256): written down once, for tensor's reference code
// and for the kernels' scalar path, which must read the same codes.
#pragma once

#include <cstdint>

#include "ladder/tensor/quant_blocks.h"

namespace ladder::tensor {

// Q4_K / Q5_K: eight 6-bit scales and eight 6-bit mins in 12 bytes. Sub-blocks
// 0..3 keep them in the low 6 bits of bytes 0..3 (scales) and 4..7 (mins);
// sub-blocks 4..7 take their low 4 bits from bytes 8..11 and their top 2 bits
// from the spare top bits of bytes 0..7.
struct ScaleMin {
    int scale;
    int min;
};

inline ScaleMin k4_scale_min(const uint8_t scales[kKScaleBytes], int sub) {
    if (sub < 4) return {scales[sub] & 63, scales[sub + 4] & 63};
    return {(scales[sub + 4] & 0x0f) | ((scales[sub - 4] >> 6) << 4),
            (scales[sub + 4] >> 4) | ((scales[sub] >> 6) << 4)};
}

// Q4_K: each 32 bytes of qs hold 64 elements, low nibbles first.
inline int q4_k_code(const uint8_t* qs, int e) {
    const uint8_t byte = qs[32 * (e / 64) + e % 32];
    return (e / 32) % 2 == 0 ? (byte & 0x0f) : (byte >> 4);
}

// Q2_K and Q3_K keep 2-bit codes in four planes: element e sits in byte
// 32 * (e / 128) + e % 32 at bit 2 * ((e % 128) / 32).
inline int two_bit_code(const uint8_t* qs, int e) {
    return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

inline int q2_k_code(const BlockQ2_K& b, int e) { return two_bit_code(b.qs, e); }

// Q3_K: the hmask bit of element e is bit e / 32 of hmask[e % 32]; a clear bit
// means the code is 4 lower, giving the signed range [-4, 3].
inline int q3_k_code(const BlockQ3_K& b, int e) {
    const bool high = (b.hmask[e % 32] >> (e / 32)) & 1;
    return two_bit_code(b.qs, e) - (high ? 0 : 4);
}

// Q3_K's 16 six-bit scales: low 4 bits are the nibbles of bytes 0..7 (low
// nibbles for sub-blocks 0..7, high nibbles for 8..15); the top 2 bits come
// from bytes 8..11, two bits per sub-block. Stored with a +32 bias.
inline int q3_k_scale(const BlockQ3_K& b, int sub) {
    const int low = sub < 8 ? (b.scales[sub] & 0x0f) : (b.scales[sub - 8] >> 4);
    const int high = (b.scales[8 + sub % 4] >> (2 * (sub / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// Q5_K: the fifth bit of element e is bit e / 32 of qh[e % 32].
inline int q5_k_code(const BlockQ5_K& b, int e) {
    const int high = (b.qh[e % 32] >> (e / 32)) & 1;
    return q4_k_code(b.qs, e) | (high << 4);
}

// Q6_K: per 128 elements, 64 bytes of ql and 32 of qh. Quarter k (32
// elements) takes nibble k / 2 of ql bytes 32 * (k % 2) .. and bits 2k, 2k+1
// of the qh bytes. The stored code is in [0, 63], 32 above the value.
inline int q6_k_stored_code(const BlockQ6_K& b, int e) {
    const int half = e / 128;
    const int quarter = (e % 128) / 32;
    const int l = e % 32;
    const uint8_t low_byte = b.ql[64 * half + 32 * (quarter % 2) + l];
    const int low = quarter < 2 ? (low_byte & 0x0f) : (low_byte >> 4);
    const int high = (b.qh[32 * half + l] >> (2 * quarter)) & 3;
    return low | (high << 4);
}

inline int q6_k_code(const BlockQ6_K& b, int e) { return q6_k_stored_code(b, e) - 32; }

// The same layouts 32 elements at a time (elements 32 * block .. + 31), in
// loops a compiler vectorizes: out[j] equals q4_k_code(qs, 32 * block + j)
// and q6_k_stored_code(b, 32 * block + j).
inline void q4_k_block_codes(const uint8_t* qs, int block, int8_t out[32]) {
    const uint8_t* bytes = qs + 32 * (block / 2);
    const int shift = 4 * (block % 2);
    for (int j = 0; j < 32; ++j) out[j] = static_cast<int8_t>((bytes[j] >> shift) & 0x0f);
}

inline void q6_k_block_codes(const BlockQ6_K& b, int block, int8_t out[32]) {
    const int half = block / 4;
    const int quarter = block % 4;
    const uint8_t* low_bytes = b.ql + 64 * half + 32 * (quarter % 2);
    const uint8_t* high_bytes = b.qh + 32 * half;
    const int low_shift = quarter < 2 ? 0 : 4;
    for (int j = 0; j < 32; ++j) {
        const int low = (low_bytes[j] >> low_shift) & 0x0f;
        const int high = (high_bytes[j] >> (2 * quarter)) & 3;
        out[j] = static_cast<int8_t>(low | (high << 4));
    }
}

// Q2_K / Q3_K: the 2-bit codes of elements 32 * block .. + 31, and Q3_K's and
// Q5_K's full codes likewise (Q3_K's in [-4, 3], Q5_K's in [0, 31]).
inline void two_bit_block_codes(const uint8_t* qs, int block, int8_t out[32]) {
    const uint8_t* bytes = qs + 32 * (block / 4);
    const int shift = 2 * (block % 4);
    for (int j = 0; j < 32; ++j) out[j] = static_cast<int8_t>((bytes[j] >> shift) & 3);
}

inline void q3_k_block_codes(const BlockQ3_K& b, int block, int8_t out[32]) {
    two_bit_block_codes(b.qs, block, out);
    for (int j = 0; j < 32; ++j) {
        const int high = (b.hmask[j] >> block) & 1;
        out[j] = static_cast<int8_t>(out[j] - (high != 0 ? 0 : 4));
    }
}

inline void q5_k_block_codes(const BlockQ5_K& b, int block, int8_t out[32]) {
    q4_k_block_codes(b.qs, block, out);
    for (int j = 0; j < 32; ++j)
        out[j] = static_cast<int8_t>(out[j] | (((b.qh[j] >> block) & 1) << 4));
}

}  // namespace ladder::tensor
