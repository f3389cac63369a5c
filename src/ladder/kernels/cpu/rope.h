// Rotary position embedding applied in place to the heads of one token.
#pragma once

#include <cstdint>

namespace ladder::kernels::cpu {

struct RopeParams {
    int32_t head_dim = 0;
    int32_t rope_dim = 0;       // leading dimensions of each head that rotate
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;    // linear position scaling
    bool neox = false;          // pairs (i, i + rope_dim/2) instead of (2i, 2i+1)
};

// x: [n_heads, head_dim] for one token at `position`.
void rope(float* x, int32_t n_heads, int32_t position, const RopeParams& params);

}  // namespace ladder::kernels::cpu
