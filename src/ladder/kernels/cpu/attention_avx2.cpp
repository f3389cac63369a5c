// attend_head with AVX2 + FMA + F16C, bit-identical to attention_scalar.cpp:
// every fma and every add pairs the same operands as the reference does, only
// eight of them run at once. Runs only after CPUID said AVX2, FMA and F16C.
// GCC 12's AVX-512 headers warn about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/fast_exp_avx2.h"
#include "ladder/kernels/cpu/kv_blocks_ahead.h"
#include "ladder/kernels/cpu/simd_x86.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu::detail {

namespace {

LADDER_AVX2 inline __m256 load_f16x8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Round to F16 and back, to nearest even: tensor::fp32_to_fp16's rounding.
LADDER_AVX2 inline __m256 round_to_f16(__m256 x) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

// Walks the rows of one KV head in position order through the block table,
// without a division per position.
class PagedRows {
public:
    PagedRows(const uint16_t* pool, const int32_t* block_table, const PagedKvLayer& kv,
              int32_t kv_head, int32_t first_position)
        : pool_(pool),
          block_table_(block_table),
          block_stride_(static_cast<int64_t>(kv.n_kv_heads) * kv.block_size * kv.head_dim),
          head_offset_(static_cast<int64_t>(kv_head) * kv.block_size * kv.head_dim),
          block_size_(kv.block_size),
          head_dim_(kv.head_dim),
          block_(first_position / kv.block_size),
          offset_(first_position % kv.block_size),
          block_rows_(block_start(block_)) {}

    // A BlocksAhead for a pass over the next n_rows rows of this walk.
    BlocksAhead blocks_ahead(int32_t n_rows) const {
        return BlocksAhead(pool_ + head_offset_, block_table_, block_stride_ * 2, block_size_,
                           int64_t{head_dim_} * 2, block_ * block_size_ + offset_, n_rows);
    }

    // The row of the next position; never reads the block table past it.
    const uint16_t* next() {
        if (offset_ == block_size_) {
            offset_ = 0;
            block_rows_ = block_start(++block_);
        }
        return block_rows_ + static_cast<int64_t>(offset_++) * head_dim_;
    }

private:
    const uint16_t* block_start(int32_t block) const {
        return pool_ + block_table_[block] * block_stride_ + head_offset_;
    }

    const uint16_t* pool_;
    const int32_t* block_table_;
    int64_t block_stride_;
    int64_t head_offset_;
    int32_t block_size_;
    int32_t head_dim_;
    int32_t block_;
    int32_t offset_;
    const uint16_t* block_rows_;
};

// scores[i] = dot(q, key of position first + i) * scale, each dot in the
// reference's 8-lane order; returns the largest score (NaN scores ignored, as
// std::max in the reference ignores them).
LADDER_AVX2 float score_positions(const float* q, PagedRows keys, int32_t n_scores,
                                  int32_t head_dim, float scale, float* scores) {
    const __m256 scale8 = _mm256_set1_ps(scale);
    __m256 max8 = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    int32_t i = 0;
    BlocksAhead ahead = keys.blocks_ahead(n_scores);
    // Eight keys at a time: eight independent fma chains hide the fma latency.
    for (; i + 8 <= n_scores; i += 8) {
        ahead.ask(i);
        const uint16_t* key[8];
        for (auto& k : key) k = keys.next();
        __m256 acc[8];
        for (auto& a : acc) a = _mm256_setzero_ps();
        for (int32_t d = 0; d < head_dim; d += 8) {
            const __m256 qd = _mm256_loadu_ps(q + d);
            for (int k = 0; k < 8; ++k)
                acc[k] = _mm256_fmadd_ps(qd, load_f16x8(key[k] + d), acc[k]);
        }
        const __m256 s = opaque(_mm256_mul_ps(sum_lanes_x8(acc), scale8));
        _mm256_storeu_ps(scores + i, s);
        // max(s, m) keeps m when s is NaN, like std::max(m, s). Which of two
        // equal zeros survives can differ from the reference; exp(s - max)
        // cannot tell them apart.
        max8 = _mm256_max_ps(s, max8);
    }
    float max_score = -std::numeric_limits<float>::infinity();
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, max8);
    for (const float m : lanes) max_score = m > max_score ? m : max_score;
    for (; i < n_scores; ++i) {
        const uint16_t* key = keys.next();
        __m256 acc = _mm256_setzero_ps();
        for (int32_t d = 0; d < head_dim; d += 8) {
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), load_f16x8(key + d), acc);
        }
        const float s = opaque(hsum(acc) * scale);
        scores[i] = s;
        max_score = max_score < s ? s : max_score;
    }
    return max_score;
}

// scores[i] = F16(scores[i] * inverse_sum): the probabilities as the reference rounds them.
LADDER_AVX2 void normalise(float* scores, int32_t n_scores, float inverse_sum) {
    const __m256 inverse8 = _mm256_set1_ps(inverse_sum);
    int32_t i = 0;
    for (; i + 8 <= n_scores; i += 8) {
        _mm256_storeu_ps(scores + i,
                         round_to_f16(_mm256_mul_ps(_mm256_loadu_ps(scores + i), inverse8)));
    }
    if (i == n_scores) return;
    alignas(32) float tail[8] = {};
    std::memcpy(tail, scores + i, sizeof(float) * static_cast<size_t>(n_scores - i));
    _mm256_store_ps(tail, round_to_f16(_mm256_mul_ps(_mm256_load_ps(tail), inverse8)));
    std::memcpy(scores + i, tail, sizeof(float) * static_cast<size_t>(n_scores - i));
}

// A row of the weighted-value lanes, padded by a cache line: rows a whole
// 4 KiB apart would make each load alias the store to another row just
// before it (the CPU matches addresses by their low 12 bits first), which
// stalled the value pass when it walked position by position.
constexpr int32_t kLaneRowFloats = kMaxHeadDim + 16;

// The heads a multi-head pass takes at once, and the keys per step that fill
// sum_lanes_x8's eight vectors with (head, key) dots.
constexpr int kMaxGroupHeads = 4;

// score_positions for n_heads (2..4) query heads at once, q_rounded[h] each:
// every key chunk is converted once for all of them. Each score is the same
// fma chain and the same lane tree as score_positions gives it; scores of
// head h go to scores + h * stride, its largest to max_scores[h].
template <int n_heads>
LADDER_AVX2 void score_positions_heads(const float (*q_rounded)[kMaxHeadDim], PagedRows keys,
                                       int32_t n_scores, int32_t head_dim, float scale,
                                       int32_t stride, float* scores, float* max_scores) {
    // Fixed at compile time so the accumulators live in registers.
    constexpr int keys_per_step = n_heads == 2 ? 4 : 2;  // heads x keys <= 8 vectors
    const __m256 scale8 = _mm256_set1_ps(scale);
    for (int h = 0; h < n_heads; ++h) max_scores[h] = -std::numeric_limits<float>::infinity();
    int32_t i = 0;
    BlocksAhead ahead = keys.blocks_ahead(n_scores);
    for (; i + keys_per_step <= n_scores; i += keys_per_step) {
        ahead.ask(i);
        const uint16_t* key[4];
        for (int k = 0; k < keys_per_step; ++k) key[k] = keys.next();
        __m256 acc[8];  // acc[h * keys_per_step + k]; unused ones stay zero
        for (auto& a : acc) a = _mm256_setzero_ps();
        for (int32_t d = 0; d < head_dim; d += 8) {
            __m256 kd[4];
            for (int k = 0; k < keys_per_step; ++k) kd[k] = load_f16x8(key[k] + d);
            for (int h = 0; h < n_heads; ++h) {
                const __m256 qd = _mm256_load_ps(q_rounded[h] + d);
                for (int k = 0; k < keys_per_step; ++k) {
                    acc[h * keys_per_step + k] =
                        _mm256_fmadd_ps(qd, kd[k], acc[h * keys_per_step + k]);
                }
            }
        }
        alignas(32) float s[8];
        _mm256_store_ps(s, opaque(_mm256_mul_ps(sum_lanes_x8(acc), scale8)));
        for (int h = 0; h < n_heads; ++h) {
            for (int k = 0; k < keys_per_step; ++k) {
                const float score = s[h * keys_per_step + k];
                scores[h * stride + i + k] = score;
                max_scores[h] = max_scores[h] < score ? score : max_scores[h];
            }
        }
    }
    for (; i < n_scores; ++i) {
        const uint16_t* key = keys.next();
        for (int h = 0; h < n_heads; ++h) {
            __m256 acc = _mm256_setzero_ps();
            for (int32_t d = 0; d < head_dim; d += 8) {
                acc = _mm256_fmadd_ps(_mm256_load_ps(q_rounded[h] + d), load_f16x8(key + d), acc);
            }
            const float score = opaque(hsum(acc) * scale);
            scores[h * stride + i] = score;
            max_scores[h] = max_scores[h] < score ? score : max_scores[h];
        }
    }
}

// Positions the multi-head value pass gathers the rows of before its lane
// passes: a multiple of 8, and few enough that the span's rows stay in L2
// for the eight passes.
constexpr int32_t kValueSpan = 256;

// The next n rows of `values` into rows[].
inline void gather_span_rows(PagedRows& values, int32_t n, const uint16_t** rows) {
    for (int32_t j = 0; j < n; ++j) rows[j] = values.next();
}

// rows[begin, end) asked for into L2.
inline void ask_span_rows(const uint16_t* const* rows, int32_t begin, int32_t end,
                          int32_t head_dim) {
    const int64_t row_bytes = int64_t{head_dim} * 2;
    for (int32_t j = begin; j < end; ++j) {
        const auto* row = reinterpret_cast<const char*>(rows[j]);
        for (int64_t offset = 0; offset < row_bytes; offset += 64) {
            _mm_prefetch(row + offset, _MM_HINT_T1);
        }
    }
}

// Lane rows of one head: [residue][kLaneRowFloats]; heads lie
// kHeadLaneFloats apart.
using HeadLanes = float[8][kLaneRowFloats];
constexpr int64_t kHeadLaneFloats = 8 * kLaneRowFloats;

// The value pass's vector work at one width (Lanes256: AVX2, Lanes512:
// AVX-512), for weight_values_heads_by_class:
//   weigh_class<n_heads, n_vectors>: one residue class's lanes (lane_rows;
//     the heads kHeadLaneFloats apart), n_vectors x kWidth
//     dimensions from d0, over the span's positions first_j, first_j + 8, ...
//     below n (row rows[j], head h's probability probabilities[h * n_scores +
//     j]): each lane's fma chain in position order, in registers for the
//     whole class;
//   sum_lanes: each dimension's eight lanes by the reference's tree.
struct Lanes256 {
    static constexpr int32_t kWidth = 8;
    static constexpr int kMaxVectors = 2;  // 4 heads x 2 accumulators in 16 registers

    template <int n_heads, int n_vectors>
    LADDER_AVX2 static void weigh_class(const float* probabilities, int32_t n_scores,
                                        const uint16_t* const* rows, int32_t n, int32_t first_j,
                                        int32_t d0, float* lane_rows) {
        __m256 acc[n_heads][n_vectors];
        for (int h = 0; h < n_heads; ++h) {
            for (int v = 0; v < n_vectors; ++v) {
                acc[h][v] = _mm256_load_ps(lane_rows + h * kHeadLaneFloats + d0 + kWidth * v);
            }
        }
        for (int32_t j = first_j; j < n; j += 8) {
            __m256 x[n_vectors];
            for (int v = 0; v < n_vectors; ++v) x[v] = load_f16x8(rows[j] + d0 + kWidth * v);
            for (int h = 0; h < n_heads; ++h) {
                const __m256 p = _mm256_set1_ps(probabilities[h * n_scores + j]);
                for (int v = 0; v < n_vectors; ++v) {
                    acc[h][v] = _mm256_fmadd_ps(x[v], p, acc[h][v]);
                }
            }
        }
        for (int h = 0; h < n_heads; ++h) {
            for (int v = 0; v < n_vectors; ++v) {
                _mm256_store_ps(lane_rows + h * kHeadLaneFloats + d0 + kWidth * v, acc[h][v]);
            }
        }
    }

    LADDER_AVX2 static void sum_lanes(const HeadLanes& lanes, IndexRange dims, float* out) {
        for (int32_t d = dims.begin; d < dims.end; d += kWidth) {
            __m256 l[8];
            for (int j = 0; j < 8; ++j) l[j] = _mm256_load_ps(lanes[j] + d);
            const __m256 sum =
                _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(l[0], l[4]), _mm256_add_ps(l[2], l[6])),
                              _mm256_add_ps(_mm256_add_ps(l[1], l[5]), _mm256_add_ps(l[3], l[7])));
            _mm256_storeu_ps(out + d, sum);
        }
    }
};

struct Lanes512 {
    static constexpr int32_t kWidth = 16;
    static constexpr int kMaxVectors = 4;

    template <int n_heads, int n_vectors>
    LADDER_AVX512 static void weigh_class(const float* probabilities, int32_t n_scores,
                                          const uint16_t* const* rows, int32_t n, int32_t first_j,
                                          int32_t d0, float* lane_rows) {
        __m512 acc[n_heads][n_vectors];
        for (int h = 0; h < n_heads; ++h) {
            for (int v = 0; v < n_vectors; ++v) {
                acc[h][v] = _mm512_load_ps(lane_rows + h * kHeadLaneFloats + d0 + kWidth * v);
            }
        }
        for (int32_t j = first_j; j < n; j += 8) {
            __m512 x[n_vectors];
            for (int v = 0; v < n_vectors; ++v) {
                x[v] = _mm512_cvtph_ps(_mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(rows[j] + d0 + kWidth * v)));
            }
            for (int h = 0; h < n_heads; ++h) {
                const __m512 p = _mm512_set1_ps(probabilities[h * n_scores + j]);
                for (int v = 0; v < n_vectors; ++v) {
                    acc[h][v] = _mm512_fmadd_ps(x[v], p, acc[h][v]);
                }
            }
        }
        for (int h = 0; h < n_heads; ++h) {
            for (int v = 0; v < n_vectors; ++v) {
                _mm512_store_ps(lane_rows + h * kHeadLaneFloats + d0 + kWidth * v, acc[h][v]);
            }
        }
    }

    LADDER_AVX512 static void sum_lanes(const HeadLanes& lanes, IndexRange dims, float* out) {
        for (int32_t d = dims.begin; d < dims.end; d += kWidth) {
            __m512 l[8];
            for (int j = 0; j < 8; ++j) l[j] = _mm512_load_ps(lanes[j] + d);
            const __m512 sum =
                _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l[0], l[4]), _mm512_add_ps(l[2], l[6])),
                              _mm512_add_ps(_mm512_add_ps(l[1], l[5]), _mm512_add_ps(l[3], l[7])));
            _mm512_storeu_ps(out + d, sum);
        }
    }
};

// weigh_class by its number of vectors less one.
template <typename Lanes, int n_heads, size_t... kIndex>
constexpr auto weigh_class_table(std::index_sequence<kIndex...>) {
    using Fn =
        void (*)(const float*, int32_t, const uint16_t* const*, int32_t, int32_t, int32_t, float*);
    return std::array<Fn, sizeof...(kIndex)>{
        &Lanes::template weigh_class<n_heads, static_cast<int>(kIndex) + 1>...};
}

// out[h * head_dim + d] = sum over positions of p * v[d] for n_heads (1..4)
// heads (probabilities of head h at probabilities + h * n_scores),
// dimensions [dims.begin, dims.end) of each, a multiple of Lanes::kWidth:
// per dimension, eight lanes by position % 8, each an fma chain in position
// order, then the lane sum, as the reference orders them (the lanes are per
// dimension, so neither the vector width nor the order of the classes
// changes any of them). Each value chunk is converted once for all heads. The lanes are
// walked one residue class at a time, a span of positions at once, so each
// class's chains stay in registers; walked position by position, every
// position loaded, updated and stored all n_heads x head_dim / kWidth lane
// vectors, and decode at depth spent its value pass on those.
template <typename Lanes, int n_heads>
void weight_values_heads_by_class(const float* probabilities, PagedRows values,
                                  int32_t first_visible, int32_t n_scores, int32_t head_dim,
                                  IndexRange dims, float* out) {
    static constexpr auto kWeigh =
        weigh_class_table<Lanes, n_heads>(std::make_index_sequence<Lanes::kMaxVectors>{});
    alignas(64) HeadLanes lanes[n_heads];
    for (int h = 0; h < n_heads; ++h) {
        for (auto& lane : lanes[h]) {
            std::memset(lane + dims.begin, 0, sizeof(float) * static_cast<size_t>(dims.size()));
        }
    }
    // The rows of this span and the next: the next span's rows are asked for
    // while this one is weighed, as the passes' stride of eight rows does
    // not start the hardware prefetcher.
    const uint16_t* span_rows[2][kValueSpan];
    gather_span_rows(values, std::min(kValueSpan, n_scores), span_rows[0]);
    ask_span_rows(span_rows[0], 0, std::min(kValueSpan, n_scores), head_dim);
    constexpr int32_t kChunk = Lanes::kWidth * Lanes::kMaxVectors;
    for (int32_t i0 = 0; i0 < n_scores; i0 += kValueSpan) {
        const int32_t n = std::min(kValueSpan, n_scores - i0);
        const int32_t span = i0 / kValueSpan;
        const uint16_t* const* rows = span_rows[span % 2];
        const uint16_t** next_rows = span_rows[(span + 1) % 2];
        const int32_t n_next = std::min(kValueSpan, n_scores - i0 - n);
        if (n_next > 0) gather_span_rows(values, n_next, next_rows);
        for (int residue = 0; residue < 8; ++residue) {
            // An eighth of the next span's rows per residue class, spread
            // over the span's work: all 512 lines asked for at once filled
            // the core's queue of misses in bursts (kernels_bench
            // attention_depth exact from memory 1.2-1.3x spread, Zen 4).
            ask_span_rows(next_rows, n_next * residue / 8, n_next * (residue + 1) / 8, head_dim);
            // The span's first j with (first_visible + i0 + j) % 8 == residue.
            const int32_t first_j = (residue - (first_visible + i0) % 8 + 8) % 8;
            for (int32_t d0 = dims.begin; d0 < dims.end; d0 += kChunk) {
                const int32_t n_vectors = std::min(kChunk, dims.end - d0) / Lanes::kWidth;
                kWeigh[static_cast<size_t>(n_vectors - 1)](probabilities + i0, n_scores, rows, n,
                                                           first_j, d0, lanes[0][residue]);
            }
        }
    }
    for (int h = 0; h < n_heads; ++h) Lanes::sum_lanes(lanes[h], dims, out + h * head_dim);
}

// The queries of `group` heads (q holds them head_dim apart) rounded to F16,
// as the reference rounds them before the dot with the F16 keys.
LADDER_AVX2 void round_queries(const float* q, int group, int32_t head_dim,
                               float (*q_rounded)[kMaxHeadDim]) {
    for (int h = 0; h < group; ++h) {
        for (int32_t d = 0; d < head_dim; d += 8) {
            _mm256_store_ps(q_rounded[h] + d, round_to_f16(_mm256_loadu_ps(q + h * head_dim + d)));
        }
    }
}

// The scores of n_heads (1..4) heads, head h's at scores + h * stride, and
// each head's largest.
template <int n_heads>
LADDER_AVX2 void score_group(const float (*q_rounded)[kMaxHeadDim], PagedRows keys,
                             int32_t n_scores, int32_t head_dim, float scale, int32_t stride,
                             float* scores, float* max_scores) {
    if constexpr (n_heads == 1) {
        max_scores[0] = score_positions(q_rounded[0], keys, n_scores, head_dim, scale, scores);
    } else {
        score_positions_heads<n_heads>(q_rounded, keys, n_scores, head_dim, scale, stride, scores,
                                       max_scores);
    }
}

// The weighted values of n_heads (1..4) heads, dimensions [dims) of each;
// kWide weights them with 512-bit vectors.
template <int n_heads, bool kWide>
LADDER_AVX2 void weigh_group(const float* probabilities, PagedRows values, int32_t first_visible,
                             int32_t n_scores, int32_t head_dim, IndexRange dims, float* out) {
    if constexpr (kWide) {
        weight_values_heads_by_class<Lanes512, n_heads>(probabilities, values, first_visible,
                                                        n_scores, head_dim, dims, out);
    } else {
        weight_values_heads_by_class<Lanes256, n_heads>(probabilities, values, first_visible,
                                                        n_scores, head_dim, dims, out);
    }
}

// One group of n_heads heads, their queries already rounded to F16: scores,
// softmax and the weighted values as attend_head_avx2 runs them per head.
template <int n_heads, bool kWide>
LADDER_AVX2 void attend_group(const float (*q_rounded)[kMaxHeadDim], PagedRows keys,
                              PagedRows values, int32_t first_visible, int32_t n_visible,
                              int32_t head_dim, float scale, float* scores, float* out) {
    const int32_t n_scores = n_visible - first_visible;
    float max_scores[n_heads];
    score_group<n_heads>(q_rounded, keys, n_scores, head_dim, scale, n_scores, scores, max_scores);
    for (int h = 0; h < n_heads; ++h) {
        float* head_scores = scores + static_cast<int64_t>(h) * n_scores;
        const double sum =
            softmax_exp_sum_avx2(head_scores, first_visible, n_visible, max_scores[h]);
        normalise(head_scores, n_scores, static_cast<float>(1.0 / sum));
    }
    weigh_group<n_heads, kWide>(scores, values, first_visible, n_scores, head_dim, {0, head_dim},
                                out);
}

// The exps of softmax_exp_sum_avx2, each group's float sum handed to
// group_sum(float) in position order.
template <typename GroupSum>
LADDER_AVX2 void softmax_exp_groups(float* scores, int32_t first_visible, int32_t n_visible,
                                    float max_score, const GroupSum& group_sum) {
    const __m256 max8 = _mm256_set1_ps(max_score);
    const int32_t n_scores = n_visible - first_visible;
    for (int32_t group = first_visible - first_visible % 8; group < n_visible; group += 8) {
        const int32_t begin = group - first_visible;  // index of the group's lane 0
        if (begin >= 0 && begin + 8 <= n_scores) {
            const __m256 e = fast_exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(scores + begin), max8));
            _mm256_storeu_ps(scores + begin, e);
            group_sum(hsum(e));
            continue;
        }
        // A group cut by the window's start or end: absent lanes add 0, as in
        // the reference.
        alignas(32) float lane[8] = {};
        for (int j = 0; j < 8; ++j) {
            if (begin + j >= 0 && begin + j < n_scores) lane[j] = scores[begin + j];
        }
        alignas(32) float e[8];
        _mm256_store_ps(e, fast_exp_avx2(_mm256_sub_ps(_mm256_load_ps(lane), max8)));
        for (int j = 0; j < 8; ++j) {
            if (begin + j >= 0 && begin + j < n_scores) {
                scores[begin + j] = e[j];
            } else {
                e[j] = 0.0f;
            }
        }
        group_sum(hsum(_mm256_load_ps(e)));
    }
}

}  // namespace

LADDER_AVX2 double softmax_exp_sum_avx2(float* scores, int32_t first_visible, int32_t n_visible,
                                        float max_score) {
    double sum = 0.0;
    softmax_exp_groups(scores, first_visible, n_visible, max_score,
                       [&](float group) { sum += static_cast<double>(group); });
    return sum;
}

LADDER_AVX2 void attend_head_avx2(const float* q, const int32_t* block_table, int32_t first_visible,
                                  int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head,
                                  float scale, float* scores, float* out) {
    const int32_t head_dim = kv.head_dim;
    LADDER_CHECK(head_dim <= kMaxHeadDim, "head_dim above kMaxHeadDim");
    LADDER_CHECK(head_dim % 8 == 0, "head_dim not a multiple of 8");
    const int32_t n_scores = n_visible - first_visible;
    if (n_scores <= 0) {
        // Nothing visible: the reference's lanes stay zero. Return before the
        // row walkers read a block table that may have no entry there.
        std::memset(out, 0, sizeof(float) * static_cast<size_t>(head_dim));
        return;
    }

    alignas(32) float q_rounded[kMaxHeadDim];
    for (int32_t d = 0; d < head_dim; d += 8) {
        _mm256_store_ps(q_rounded + d, round_to_f16(_mm256_loadu_ps(q + d)));
    }
    const float max_score = score_positions(
        q_rounded, PagedRows(kv.f16_keys(), block_table, kv, kv_head, first_visible), n_scores,
        head_dim, scale, scores);
    const double sum = softmax_exp_sum_avx2(scores, first_visible, n_visible, max_score);
    normalise(scores, n_scores, static_cast<float>(1.0 / sum));
    weight_values_heads_by_class<Lanes256, 1>(
        scores, PagedRows(kv.f16_values(), block_table, kv, kv_head, first_visible), first_visible,
        n_scores, head_dim, {0, head_dim}, out);
}

namespace {

// attend_heads over groups of up to kMaxGroupHeads heads; kWide weights the
// values with 512-bit vectors.
template <bool kWide>
LADDER_AVX2 void attend_heads_in_groups(const float* q, int32_t n_heads, const int32_t* block_table,
                                        int32_t first_visible, int32_t n_visible,
                                        const PagedKvLayer& kv, int32_t kv_head, float scale,
                                        float* scores, float* out) {
    const int32_t head_dim = kv.head_dim;
    const int32_t n_scores = n_visible - first_visible;
    if (n_heads == 1 || n_scores <= 0) {
        for (int32_t h = 0; h < n_heads; ++h) {
            attend_head_avx2(q + h * head_dim, block_table, first_visible, n_visible, kv, kv_head,
                             scale, scores + static_cast<int64_t>(h) * std::max(n_scores, 0),
                             out + h * head_dim);
        }
        return;
    }
    LADDER_CHECK(head_dim <= kMaxHeadDim, "head_dim above kMaxHeadDim");
    LADDER_CHECK(head_dim % 8 == 0, "head_dim not a multiple of 8");
    for (int32_t h0 = 0; h0 < n_heads; h0 += kMaxGroupHeads) {
        const int group = std::min<int32_t>(kMaxGroupHeads, n_heads - h0);
        float* group_scores = scores + static_cast<int64_t>(h0) * n_scores;
        alignas(32) float q_rounded[kMaxGroupHeads][kMaxHeadDim];
        round_queries(q + h0 * head_dim, group, head_dim, q_rounded);
        const PagedRows keys(kv.f16_keys(), block_table, kv, kv_head, first_visible);
        const PagedRows values(kv.f16_values(), block_table, kv, kv_head, first_visible);
        float* group_out = out + h0 * head_dim;
        switch (group) {
            case 1:
                attend_group<1, kWide>(q_rounded, keys, values, first_visible, n_visible, head_dim,
                                       scale, group_scores, group_out);
                break;
            case 2:
                attend_group<2, kWide>(q_rounded, keys, values, first_visible, n_visible, head_dim,
                                       scale, group_scores, group_out);
                break;
            case 3:
                attend_group<3, kWide>(q_rounded, keys, values, first_visible, n_visible, head_dim,
                                       scale, group_scores, group_out);
                break;
            default:
                attend_group<4, kWide>(q_rounded, keys, values, first_visible, n_visible, head_dim,
                                       scale, group_scores, group_out);
                break;
        }
    }
}

}  // namespace

void attend_heads_avx2(const float* q, int32_t n_heads, const int32_t* block_table,
                       int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                       int32_t kv_head, float scale, float* scores, float* out) {
    attend_heads_in_groups<false>(q, n_heads, block_table, first_visible, n_visible, kv, kv_head,
                                  scale, scores, out);
}

void attend_heads_avx512(const float* q, int32_t n_heads, const int32_t* block_table,
                         int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                         int32_t kv_head, float scale, float* scores, float* out) {
    if (kv.head_dim % 16 != 0) {
        attend_heads_avx2(q, n_heads, block_table, first_visible, n_visible, kv, kv_head, scale,
                          scores, out);
        return;
    }
    attend_heads_in_groups<true>(q, n_heads, block_table, first_visible, n_visible, kv, kv_head,
                                 scale, scores, out);
}

namespace {

// Split attention (attention.h, SplitAttentionKernels): the pieces of
// attend_heads_in_groups, each over a part of the positions or dimensions.

// score_group and weigh_group by their number of heads less one.
using ScoreGroupFn = void (*)(const float (*)[kMaxHeadDim], PagedRows, int32_t, int32_t, float,
                              int32_t, float*, float*);
constexpr ScoreGroupFn kScoreGroups[] = {score_group<1>, score_group<2>, score_group<3>,
                                         score_group<4>};
using WeighGroupFn = void (*)(const float*, PagedRows, int32_t, int32_t, int32_t, IndexRange,
                              float*);
template <bool kWide>
constexpr WeighGroupFn kWeighGroups[] = {weigh_group<1, kWide>, weigh_group<2, kWide>,
                                         weigh_group<3, kWide>, weigh_group<4, kWide>};
static_assert(std::size(kScoreGroups) == kMaxGroupHeads);

LADDER_AVX2 void split_score(const float* q, int32_t n_heads, const int32_t* block_table,
                             int32_t first_visible, int32_t n_visible, IndexRange positions,
                             const PagedKvLayer& kv, int32_t kv_head, float scale, float* scores,
                             float* max_scores) {
    const int32_t head_dim = kv.head_dim;
    const int32_t n_scores = n_visible - first_visible;
    const int32_t n = positions.end - positions.begin;
    float* first = scores + (positions.begin - first_visible);
    for (int32_t h0 = 0; h0 < n_heads; h0 += kMaxGroupHeads) {
        const int group = std::min<int32_t>(kMaxGroupHeads, n_heads - h0);
        alignas(32) float q_rounded[kMaxGroupHeads][kMaxHeadDim];
        round_queries(q + h0 * head_dim, group, head_dim, q_rounded);
        const PagedRows keys(kv.f16_keys(), block_table, kv, kv_head, positions.begin);
        kScoreGroups[group - 1](q_rounded, keys, n, head_dim, scale, n_scores,
                                first + static_cast<int64_t>(h0) * n_scores, max_scores + h0);
    }
}

LADDER_AVX2 void split_exponentiate(float* scores, int32_t n_heads, int32_t first_visible,
                                    int32_t n_visible, IndexRange positions,
                                    const float* max_scores, float* group_sums) {
    const int32_t n_scores = n_visible - first_visible;
    const int32_t n_groups = softmax_group_count(first_visible, n_visible);
    const int32_t first_group = positions.begin / 8 - first_visible / 8;
    for (int32_t h = 0; h < n_heads; ++h) {
        float* sums = group_sums + static_cast<int64_t>(h) * n_groups + first_group;
        softmax_exp_groups(
            scores + static_cast<int64_t>(h) * n_scores + (positions.begin - first_visible),
            positions.begin, positions.end, max_scores[h], [&](float group) { *sums++ = group; });
    }
}

template <bool kWide>
LADDER_AVX2 void split_weigh(const float* exps, int32_t n_heads, const float* group_sums,
                             const int32_t* block_table, int32_t first_visible, int32_t n_visible,
                             const PagedKvLayer& kv, int32_t kv_head, IndexRange dims,
                             float* probabilities, float* out) {
    const int32_t head_dim = kv.head_dim;
    const int32_t n_scores = n_visible - first_visible;
    const int32_t n_groups = softmax_group_count(first_visible, n_visible);
    for (int32_t h = 0; h < n_heads; ++h) {
        double sum = 0.0;
        for (int32_t g = 0; g < n_groups; ++g) {
            sum += static_cast<double>(group_sums[static_cast<int64_t>(h) * n_groups + g]);
        }
        float* head_probabilities = probabilities + static_cast<int64_t>(h) * n_scores;
        std::memcpy(head_probabilities, exps + static_cast<int64_t>(h) * n_scores,
                    sizeof(float) * static_cast<size_t>(n_scores));
        normalise(head_probabilities, n_scores, static_cast<float>(1.0 / sum));
    }
    for (int32_t h0 = 0; h0 < n_heads; h0 += kMaxGroupHeads) {
        const int group = std::min<int32_t>(kMaxGroupHeads, n_heads - h0);
        const PagedRows values(kv.f16_values(), block_table, kv, kv_head, first_visible);
        kWeighGroups<kWide>[group - 1](probabilities + static_cast<int64_t>(h0) * n_scores, values,
                                       first_visible, n_scores, head_dim, dims,
                                       out + h0 * head_dim);
    }
}

}  // namespace

const SplitAttentionKernels kSplitAttentionAvx2{split_score, split_exponentiate,
                                                split_weigh<false>};
const SplitAttentionKernels kSplitAttentionAvx512{split_score, split_exponentiate,
                                                  split_weigh<true>};

}  // namespace ladder::kernels::cpu::detail
