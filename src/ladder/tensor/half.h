// Scalar conversions between float and the two 16-bit float formats GGUF
// stores: IEEE binary16 (F16) and bfloat16 (BF16), as raw uint16_t bits.
// Inline because kernels call them per element; SIMD paths use F16C instead.
#pragma once

#include <bit>
#include <cstdint>

namespace ladder::tensor {

// binary16 -> float is exact: every half value is a float.
inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) {
        // Inf, or NaN with its payload in the top mantissa bits. A signaling
        // NaN comes out quiet, as F16C's vcvtph2ps (llama.cpp on x86) makes it.
        const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
        return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
    }
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24, exact in float.
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
    }
    // Normal: rebias the exponent from 15 to 127 and widen the mantissa.
    return std::bit_cast<float>(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
}

// float -> binary16, round to nearest, ties to even (IEEE default; what F16C's
// vcvtps2ph and numpy's astype(float16) do). Overflow gives inf, tiny values
// become subnormals or signed zero, NaN stays a quiet NaN with its sign and the
// top of its payload.
inline uint16_t fp32_to_fp16(float f) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t magnitude = bits & 0x7fffffffu;

    if (magnitude > 0x7f800000u) {  // NaN
        return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    }
    // 65520 is halfway between the largest half (65504, odd mantissa) and
    // 65536; ties go to even, so it and everything above become inf.
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);

    if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal half
        // Rebias the exponent (127 -> 15) in place, then drop 13 mantissa bits
        // with round-to-nearest-even. A carry out of the mantissa correctly
        // bumps the exponent.
        const uint32_t rebiased = magnitude - ((127u - 15u) << 23);
        const uint32_t rounded = rebiased + 0xfffu + ((rebiased >> 13) & 1u);
        return static_cast<uint16_t>(sign | (rounded >> 13));
    }

    // Subnormal half: the result is round(value / 2^-24), an integer in
    // [0, 1024]; 1024 is the encoding of the smallest normal, so rounding up
    // into it needs no special case.
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return sign;  // below 2^-25: rounds to zero
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;  // implicit 1
    // value = mantissa * 2^(exponent - 150), so value / 2^-24 = mantissa >> shift.
    const uint32_t shift = 126 - exponent;  // in [14, 24]
    const uint32_t truncated = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    const bool round_up = remainder > halfway || (remainder == halfway && (truncated & 1u));
    return static_cast<uint16_t>(sign | (truncated + (round_up ? 1u : 0u)));
}

// bfloat16 is the top half of a float: widening is a shift.
inline float bf16_to_fp32(uint16_t h) {
    return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

// float -> bfloat16 as ggml_compute_fp32_to_bf16 does it: round to nearest
// even on the dropped 16 bits (overflow rounds to inf), NaN forced quiet by
// setting bit 6, subnormals kept.
inline uint16_t fp32_to_bf16(float f) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<uint16_t>((bits >> 16) | 0x40u);
    }
    return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace ladder::tensor
