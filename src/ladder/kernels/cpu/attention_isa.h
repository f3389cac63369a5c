// Internal to kernels/cpu: the per-path attention kernels behind attend_head_for.
#pragma once

#include "ladder/kernels/cpu/attention.h"

namespace ladder::kernels::cpu::detail {

// attention_scalar.cpp: the reference, portable C++.
void attend_head_scalar(const float* q, const int32_t* block_table, int32_t first_visible,
                        int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head, float scale,
                        float* scores, float* out);
// attention_avx2.cpp: AVX2 + FMA + F16C, bit-identical to the scalar one.
void attend_head_avx2(const float* q, const int32_t* block_table, int32_t first_visible,
                      int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head, float scale,
                      float* scores, float* out);

// attend_heads of each path: the scalar one runs attend_head_scalar per head.
void attend_heads_scalar(const float* q, int32_t n_heads, const int32_t* block_table,
                         int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                         int32_t kv_head, float scale, float* scores, float* out);
void attend_heads_avx2(const float* q, int32_t n_heads, const int32_t* block_table,
                       int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                       int32_t kv_head, float scale, float* scores, float* out);
// The AVX2 one with the values weighted by 512-bit vectors (head_dim a
// multiple of 16; otherwise it runs the AVX2 one). Bit-identical to both.
void attend_heads_avx512(const float* q, int32_t n_heads, const int32_t* block_table,
                         int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                         int32_t kv_head, float scale, float* scores, float* out);

// attention_avx2.cpp: the split steps (attention.h) of the avx2 path, and of
// the avx512 one (its values weighted by 512-bit vectors).
extern const SplitAttentionKernels kSplitAttentionAvx2;
extern const SplitAttentionKernels kSplitAttentionAvx512;

// The softmax step of each path, exposed because its grouping shows in the
// output only through rare roundings: scores[i] = fast_exp(scores[i] -
// max_score) for positions [first_visible, n_visible), and their sum over
// groups of 8 positions aligned to position 0, each group summed in float in
// the 8-lane order, the group sums in double.
double softmax_exp_sum_scalar(float* scores, int32_t first_visible, int32_t n_visible,
                              float max_score);
double softmax_exp_sum_avx2(float* scores, int32_t first_visible, int32_t n_visible,
                            float max_score);

// The softmax of attend_heads_any_type, online as llama.cpp's flash attention
// runs it for a quantized cache, key by key: a score above the running
// maximum M (from -inf) gets weight 1 and rescale expf(M - score) (the factor
// the accumulator and the sum take before it), any other weight
// expf(score - M) and rescale 1. For each of n_heads heads (rows n apart),
// scores[0, n) become the weights, rescales[0, n) the rescales, and sums[h]
// the sum, fma(sum, rescale, weight) in order. The scalar path calls the C
// library's expf; avx2 (attention_any_type_avx2.cpp) and avx512
// (attention_any_type_avx512.cpp) compute it eight at a time in the same
// bits (libm_expf_avx2.h, libm_expf_avx512.h).
void online_softmax_scalar(float* scores, float* rescales, int32_t n, int32_t n_heads,
                           float* sums);
void online_softmax_avx2(float* scores, float* rescales, int32_t n, int32_t n_heads, float* sums);
void online_softmax_avx512(float* scores, float* rescales, int32_t n, int32_t n_heads,
                           float* sums);

// attention_any_type_avx2.cpp: the scores of attend_heads_any_type over a Q8_0
// key cache, for n_heads queries already in Q8_0 (row h at q_rows + h *
// q_row_stride): scores[h * n_scores + i] = dot(key of position
// first_visible + i, query h) * scale, bit for bit the Q8_0 vec_dot of every
// path.
void score_q8_0_keys_avx2(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                          int32_t first_visible, int32_t n_scores, const uint8_t* q_rows,
                          int64_t q_row_stride, int32_t n_heads, float scale, float* scores);
// The weighted values of attend_heads_any_type over a Q8_0 value cache, for
// n_heads heads whose weights and rescales are rows n_scores apart: from 0 and
// in position order, each head's accumulator is first multiplied by
// rescales[h * n_scores + i] where that is not 1 (llama.cpp's rescale on a new
// maximum score), then acc = fma(decode(value of position first_visible +
// i)[d], weights[h * n_scores + i], acc): bit for bit the scalar path's decode
// and weight row ops, but each row decoded in registers, never stored. avx2
// (attention_any_type_avx2.cpp): 256-bit vectors; avx512
// (attention_any_type_avx512.cpp): 512-bit ones.
void weight_q8_0_values_avx2(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                             int32_t first_visible, int32_t n_scores, const float* weights,
                             const float* rescales, int32_t n_heads, float* out);
void weight_q8_0_values_avx512(const PagedKvLayer& kv, const int32_t* block_table, int32_t kv_head,
                               int32_t first_visible, int32_t n_scores, const float* weights,
                               const float* rescales, int32_t n_heads, float* out);

}  // namespace ladder::kernels::cpu::detail
