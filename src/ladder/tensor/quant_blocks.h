// Byte layouts of ggml's quantized blocks, field for field as ggml-common.h
// declares them, so a block can be read straight from a mapped GGUF file.
// Field names follow ggml's so the two can be read side by side.
#pragma once

#include <cstdint>

namespace ladder::tensor {

constexpr int kQK = 32;    // elements per block of the legacy quants (Q4_0 .. Q8_1)
constexpr int kQKK = 256;  // elements per super-block of the K-quants
constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q4_K / Q5_K

// All 16-bit floats below (d, m, s, dmin) are IEEE binary16 bits; see half.h.

// Q4_0: x = d * (q - 8), q in [0, 15]. qs[j] holds element j in its low
// nibble and element j + 16 in its high nibble.
struct BlockQ4_0 {
    uint16_t d;
    uint8_t qs[kQK / 2];
};

// Q4_1: x = d * q + m, q in [0, 15]; nibbles as Q4_0.
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[kQK / 2];
};

// Q5_0: x = d * (q - 16), q in [0, 31]. Low 4 bits as Q4_0; bit 4 of element
// j is bit j of qh (read as a little-endian uint32).
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};

// Q5_1: x = d * q + m, q in [0, 31]; bits as Q5_0.
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};

// Q8_0: x = d * q, q in [-127, 127] (quantize never makes -128).
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[kQK];
};

// Q8_1: Q8_0 plus s = d * sum(qs), which lets a Q4_1/Q5_1 dot product apply
// the weight block's offset m with one multiply.
struct BlockQ8_1 {
    uint16_t d;
    uint16_t s;
    int8_t qs[kQK];
};

// Q2_K: 16 sub-blocks of 16. scales[i]: low nibble scale, high nibble min of
// sub-block i; x = d * scale * q - dmin * min, q in [0, 3]. Each 32-byte half
// of qs holds 128 elements as four 2-bit planes (shift 0, 2, 4, 6).
struct BlockQ2_K {
    uint8_t scales[kQKK / 16];
    uint8_t qs[kQKK / 4];
    uint16_t d;
    uint16_t dmin;
};

// Q3_K: 16 sub-blocks of 16 with signed 6-bit scales (stored + 32, packed in
// 12 bytes); x = d * (scale - 32) * q, q in [-4, 3]: low 2 bits in qs as Q2_K,
// and q loses 4 when its hmask bit is clear.
struct BlockQ3_K {
    uint8_t hmask[kQKK / 8];
    uint8_t qs[kQKK / 4];
    uint8_t scales[12];
    uint16_t d;
};

// Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes;
// x = d * scale * q - dmin * min, q in [0, 15]. Each 32 bytes of qs hold two
// sub-blocks: the low nibbles, then the high nibbles.
struct BlockQ4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[kKScaleBytes];
    uint8_t qs[kQKK / 2];
};

// Q5_K: Q4_K plus a fifth bit per element in qh (bit 2k of qh[l] for the low
// nibble group k, bit 2k + 1 for the high one); q in [0, 31].
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[kKScaleBytes];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};

// Q6_K: 16 sub-blocks of 16 with int8 scales; x = d * scale * (q - 32),
// q in [0, 63]: low 4 bits in ql, high 2 bits in qh.
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    uint16_t d;
};

// Q8_K: activations for K-quant dot products. d is a float (not a half) and
// bsums[i] is the sum of qs over elements 16i .. 16i + 15, which folds the
// weights' mins into one multiply per sub-block.
struct BlockQ8_K {
    float d;
    int8_t qs[kQKK];
    int16_t bsums[kQKK / 16];
};

// The structs must be exactly the bytes ggml writes (and dtype.h's table
// promises; unit_tensor checks the two agree): a padding byte would misread
// every block after the first.
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

}  // namespace ladder::tensor
