// The scale searches of ggml's K-quant reference quantizers (ggml-quants.c):
// for one sub-block of floats, the scale (and, for the types with an offset,
// the min) and the integer codes that go with it. Every float operation keeps
// ggml's operand order, because llama-quantize's output is byte-identical
// only when each rounding step is the same.
#pragma once

#include <bit>
#include <cstdint>

namespace ladder::tensor {

// ggml's round-to-nearest through the 1.5 * 2^23 trick: halves go to even,
// exact for |x| <= 2^22 (every caller stays far inside that).
inline int nearest_int(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x + 12582912.0f);
    return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

// Symmetric codes in [0, 2 * nmax) for x ~= scale * (code - nmax), the scale
// chosen to minimize the x^2-weighted squared error over 19 trial scales
// around -nmax / max (ggml's make_qx_quants with rmse_type 1 and no
// importance weights). Returns the scale; 0 with all codes 0 for a block of
// (near) zeros.
float symmetric_scale_weighted_by_square(int n, int nmax, const float* x, int8_t* codes);

// Symmetric codes in [0, 2 * nmax) refined by coordinate descent: each code in
// turn moves to the best value for the others' current fit, up to five
// sweeps (ggml's make_q3_quants with do_rmse). Returns the scale.
float symmetric_scale_by_descent(int n, int nmax, const float* x, int8_t* codes);

// Codes in [0, nmax] for x ~= scale * code - min with min >= 0, searching
// nstep + 1 trial scales (rmin + rdelta * i + nmax) / (max - min) and fitting
// scale and min by weighted least squares at each (ggml's make_qkx2_quants).
// `scratch` holds n codes. Writes the min (as a positive offset) to *min_out.
float scale_and_min_search(int n, int nmax, const float* x, const float* weights, uint8_t* codes,
                           float* min_out, uint8_t* scratch, float rmin, float rdelta, int nstep,
                           bool absolute_error);

}  // namespace ladder::tensor
