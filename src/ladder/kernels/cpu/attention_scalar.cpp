// The reference attention kernel: portable C++ that spells out the order of
// every rounding llama.cpp's x86 path makes. The SIMD paths are tested
// against it bit for bit.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/fast_exp.h"
#include "ladder/tensor/half.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu::detail {

namespace {

// The dot product of a float row with an F16 row in the order an 8-lane
// FMA vector computes it: lane j accumulates elements j, j+8, j+16, ... with
// fused multiply-adds, then the lanes are summed as (j, j+4) pairs, then
// (0, 2) and (1, 3), then the two halves. It is the order llama.cpp's x86
// F16 matrix product uses, so attention scores agree with it bit for bit.
// n must be a multiple of 8.
float dot_f16_8_lanes(const float* a, const uint16_t* b, int32_t n) {
    float lane[8] = {};
    for (int32_t i = 0; i < n; i += 8) {
        for (int32_t j = 0; j < 8; ++j)
            lane[j] = std::fma(a[i + j], tensor::fp16_to_fp32(b[i + j]), lane[j]);
    }
    const float h0 = lane[0] + lane[4];
    const float h1 = lane[1] + lane[5];
    const float h2 = lane[2] + lane[6];
    const float h3 = lane[3] + lane[7];
    return (h0 + h2) + (h1 + h3);
}

}  // namespace

double softmax_exp_sum_scalar(float* scores, int32_t first_visible, int32_t n_visible,
                              float max_score) {
    // The sum runs over groups of 8 positions (aligned to position 0): each
    // group is summed in float in the 8-lane order, and the group sums in
    // double, as llama.cpp's softmax does.
    const int32_t n_scores = n_visible - first_visible;
    double sum = 0.0;
    for (int32_t group_begin = first_visible - first_visible % 8; group_begin < n_visible;
         group_begin += 8) {
        float lane[8] = {};
        for (int32_t j = 0; j < 8; ++j) {
            const int32_t i = group_begin + j - first_visible;
            if (i < 0 || i >= n_scores) continue;
            scores[i] = fast_exp(scores[i] - max_score);
            lane[j] = scores[i];
        }
        sum += static_cast<double>(((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                                   ((lane[1] + lane[5]) + (lane[3] + lane[7])));
    }
    return sum;
}

void attend_head_scalar(const float* q, const int32_t* block_table, int32_t first_visible,
                        int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head, float scale,
                        float* scores, float* out) {
    const int32_t head_dim = kv.head_dim;
    const int32_t block_size = kv.block_size;
    LADDER_CHECK(head_dim <= kMaxHeadDim, "head_dim above kMaxHeadDim");
    LADDER_CHECK(head_dim % 8 == 0, "head_dim not a multiple of 8");
    const int64_t block_stride = static_cast<int64_t>(kv.n_kv_heads) * block_size * head_dim;
    const int64_t head_offset = static_cast<int64_t>(kv_head) * block_size * head_dim;
    const auto key_at = [&](int32_t position) {
        return kv.f16_keys() + block_table[position / block_size] * block_stride + head_offset +
               static_cast<int64_t>(position % block_size) * head_dim;
    };
    const auto value_at = [&](int32_t position) {
        return kv.f16_values() + block_table[position / block_size] * block_stride + head_offset +
               static_cast<int64_t>(position % block_size) * head_dim;
    };

    float q_rounded[kMaxHeadDim];
    for (int32_t d = 0; d < head_dim; ++d)
        q_rounded[d] = tensor::fp16_to_fp32(tensor::fp32_to_fp16(q[d]));

    // Scores in position order; the max and the sum over them do not depend
    // on anything outside this sequence.
    const int32_t n_scores = n_visible - first_visible;
    float max_score = -std::numeric_limits<float>::infinity();
    for (int32_t i = 0; i < n_scores; ++i) {
        const uint16_t* key = key_at(first_visible + i);
        scores[i] = dot_f16_8_lanes(q_rounded, key, head_dim) * scale;
        max_score = std::max(max_score, scores[i]);
    }
    const double sum = softmax_exp_sum_scalar(scores, first_visible, n_visible, max_score);
    const auto inverse_sum = static_cast<float>(1.0 / sum);

    // out[d] = sum over positions of p * v[d], each dimension in the same
    // 8-lane order over positions (lane = position % 8).
    float lanes[kMaxHeadDim][8] = {};
    for (int32_t i = 0; i < n_scores; ++i) {
        const int32_t position = first_visible + i;
        const float p = tensor::fp16_to_fp32(tensor::fp32_to_fp16(scores[i] * inverse_sum));
        const uint16_t* value = value_at(position);
        for (int32_t d = 0; d < head_dim; ++d) {
            float& lane = lanes[d][position % 8];
            lane = std::fma(tensor::fp16_to_fp32(value[d]), p, lane);
        }
    }
    for (int32_t d = 0; d < head_dim; ++d) {
        const float* lane = lanes[d];
        out[d] = ((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                 ((lane[1] + lane[5]) + (lane[3] + lane[7]));
    }
}

void attend_heads_scalar(const float* q, int32_t n_heads, const int32_t* block_table,
                         int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                         int32_t kv_head, float scale, float* scores, float* out) {
    const int32_t head_dim = kv.head_dim;
    const int64_t n_scores = std::max(0, n_visible - first_visible);
    for (int32_t h = 0; h < n_heads; ++h) {
        attend_head_scalar(q + h * head_dim, block_table, first_visible, n_visible, kv, kv_head,
                           scale, scores + h * n_scores, out + h * head_dim);
    }
}

}  // namespace ladder::kernels::cpu::detail
