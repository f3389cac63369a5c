// Chunked attention on AVX512-BF16 (Zen 4, Cooper Lake, Sapphire Rapids):
// q.k and p.v as BF16 pairs accumulated in F32 by vdpbf16ps, twice the
// multiply-adds per instruction of F32 fma. Per chunk and row:
//   s[p] = scale * sum over dimension pairs i, in order, of
//          (q[2i] k[2i] + q[2i+1] k[2i+1])     q and k rounded to BF16
//   m    = max of s over the row's positions
//   e[p] = exp(max(s[p] - m, -87))             fast_exp; 0 where the row does not see p
//   sum  = lanes p % 16 in position order, then a fixed tree
//   o[d] = sum over position pairs j, in order, of
//          (e[2j] v[2j][d] + e[2j+1] v[2j+1][d])   e and v rounded to BF16
// Every score is a chain over the same pairs and every output dimension over
// the same position pairs whatever the tile holds (positions a row does not
// see add exact zeros), so decode and prefill give the same bits. The
// chunks merge in F32 as the avx2 path merges them.
//
// Layouts (as 32-bit words holding two BF16; an F16 cache's chunk is
// converted into them in scratch, while a BF16 cache holds them in its
// blocks, the keys 16 positions to a group, kv_tiles.h, and is read in
// place):
//   queries [row][head_dim / 2]            a row's pairs, broadcast one at a time
//   keys    [head_dim / 2][kAttentionChunk] pair i of every key of the chunk:
//                                          16 keys per vector, so one broadcast
//                                          pair of q meets 16 keys
//   values  [kAttentionChunk / 2][head_dim] dimension d of positions 2j and 2j + 1
//   scores  [row][kAttentionChunk]          F32 scores, then the row's BF16
//                                          probability pairs in its first half
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ladder/kernels/cpu/chunked_attention_isa.h"
#include "ladder/kernels/cpu/fast_exp.h"
#include "ladder/kernels/cpu/kv_tiles.h"
#include "ladder/kernels/cpu/simd_x86.h"

#define LADDER_AVX512_BF16 \
    __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16")))

namespace ladder::kernels::cpu::detail {

namespace {

constexpr float kMinExponent = -87.0f;  // as the F32 paths clamp
constexpr int32_t kKeyGroups = kAttentionChunk / 16;  // 16 keys (or positions) per vector
constexpr int32_t kPairStride = kAttentionChunk;      // words per pair row of the key layout

LADDER_AVX512_BF16 inline __m512 opaque512(__m512 v) {
    asm("" : "+v"(v));
    return v;
}

// fast_exp (fast_exp.h) on 16 lanes, for x in [-87, 88] where it needs no
// special case: the same operations in the same order as the scalar one.
LADDER_AVX512_BF16 inline __m512 fast_exp_in_range(__m512 x) {
    using namespace fast_exp_constants;
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(kLog2e), _mm512_set1_ps(kShift));
    const __m512 n = _mm512_sub_ps(z, _mm512_set1_ps(kShift));
    const __m512 minus_n = _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(n), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
    const __m512 b = _mm512_fmadd_ps(minus_n, _mm512_set1_ps(kLn2Low),
                                     _mm512_fmadd_ps(minus_n, _mm512_set1_ps(kLn2High), x));
    const __m512i e = _mm512_slli_epi32(_mm512_castps_si512(z), 23);
    const __m512 scale = _mm512_castsi512_ps(_mm512_add_epi32(e, _mm512_set1_epi32(0x3f800000)));
    const __m512 b2 = _mm512_mul_ps(b, b);
    const __m512 poly = _mm512_fmadd_ps(
        _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(kC5), b, _mm512_set1_ps(kC4)), b2,
                        _mm512_fmadd_ps(_mm512_set1_ps(kC3), b, _mm512_set1_ps(kC2))),
        b2, _mm512_mul_ps(_mm512_set1_ps(kC1), b));
    return _mm512_fmadd_ps(poly, scale, scale);
}

// Two vectors of 16 floats as 16 words of BF16 pairs, (lo[0], lo[1]), ...,
// (hi[14], hi[15]), each rounded to nearest even.
LADDER_AVX512_BF16 inline __m512i bf16_pairs(__m512 lo, __m512 hi) {
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

LADDER_AVX512_BF16 inline __m512 f16x16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

LADDER_AVX512_BF16 inline __m512 dot_pairs(__m512 acc, __m512i a, __m512i b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}

// In place: r[j] word i becomes r[i] word j.
LADDER_AVX512_BF16 void transpose16(__m512i r[16]) {
    __m512i t[16];
    __m512i u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i + 0], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i + 0], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    // u[4i + c], 128-bit lane L: word 4L + c of rows 4i .. 4i + 3.
    for (int c = 0; c < 4; ++c) {
        const __m512i a0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88);
        const __m512i a1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xdd);
        const __m512i b0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);
        const __m512i b1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xdd);
        r[c] = _mm512_shuffle_i32x4(a0, b0, 0x88);
        r[8 + c] = _mm512_shuffle_i32x4(a0, b0, 0xdd);
        r[4 + c] = _mm512_shuffle_i32x4(a1, b1, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(a1, b1, 0xdd);
    }
}

// Walks the rows of one KV head in position order through the block table.
class PagedRows {
public:
    PagedRows(const uint16_t* pool, const int32_t* block_table, const PagedKvLayer& kv,
              int32_t kv_head)
        : pool_(pool),
          block_table_(block_table),
          block_stride_(static_cast<int64_t>(kv.n_kv_heads) * kv.block_size * kv.head_dim),
          head_offset_(static_cast<int64_t>(kv_head) * kv.block_size * kv.head_dim),
          block_size_(kv.block_size),
          head_dim_(kv.head_dim) {}

    const uint16_t* row(int32_t position) const {
        return pool_ + block_table_[position / block_size_] * block_stride_ + head_offset_ +
               static_cast<int64_t>(position % block_size_) * head_dim_;
    }

private:
    const uint16_t* pool_;
    const int32_t* block_table_;
    int64_t block_stride_;
    int64_t head_offset_;
    int32_t block_size_;
    int32_t head_dim_;
};

LADDER_AVX512_BF16 void load_queries(const AttentionTile& tile, int32_t head_dim,
                                     const ChunkScratch& scratch) {
    auto* words = reinterpret_cast<uint32_t*>(scratch.queries);
    const int32_t n_pairs = head_dim / 2;
    for (int32_t r = 0; r < tile.n_rows(); ++r) {
        const float* q = tile.q + (r / tile.n_heads) * tile.token_stride +
                         static_cast<int64_t>(r % tile.n_heads) * head_dim;
        for (int32_t d = 0; d < head_dim; d += 32) {
            _mm512_storeu_si512(words + r * n_pairs + d / 2,
                                bf16_pairs(_mm512_loadu_ps(q + d), _mm512_loadu_ps(q + d + 16)));
        }
    }
}

// The key layout for groups [group_begin, group_end) of the chunk: keys
// outside [window.begin, window.end) are zero.
LADDER_AVX512_BF16 void load_keys(const PagedRows& rows, int32_t head_dim, int32_t chunk_begin,
                                  RowWindow window, int32_t group_begin, int32_t group_end,
                                  uint32_t* keys) {
    for (int32_t g = group_begin; g < group_end; ++g) {
        const int32_t first = chunk_begin + 16 * g;
        const uint16_t* key[16];
        for (int j = 0; j < 16; ++j) {
            const int32_t position = first + j;
            key[j] = position >= window.begin && position < window.end ? rows.row(position)
                                                                       : nullptr;
        }
        for (int32_t d = 0; d < head_dim; d += 32) {
            __m512i m[16];
            for (int j = 0; j < 16; ++j) {
                m[j] = key[j] == nullptr
                           ? _mm512_setzero_si512()
                           : bf16_pairs(f16x16(key[j] + d), f16x16(key[j] + d + 16));
            }
            transpose16(m);
            for (int i = 0; i < 16; ++i) {
                _mm512_store_si512(keys + (d / 2 + i) * kPairStride + 16 * g, m[i]);
            }
        }
    }
}

// The value layout for position pairs [pair_begin, pair_end): positions
// outside the window are zero.
LADDER_AVX512_BF16 void load_values(const PagedRows& rows, int32_t head_dim, int32_t chunk_begin,
                                    RowWindow window, int32_t pair_begin, int32_t pair_end,
                                    uint32_t* values) {
    // Word 2d takes even row's dimension d, word 2d + 1 the odd row's.
    alignas(64) static const uint16_t kInterleave[32] = {
        0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
        8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    const __m512i interleave = _mm512_load_si512(kInterleave);
    for (int32_t j = pair_begin; j < pair_end; ++j) {
        const int32_t even = chunk_begin + 2 * j;
        const bool has_even = even >= window.begin && even < window.end;
        const bool has_odd = even + 1 >= window.begin && even + 1 < window.end;
        const uint16_t* even_row = has_even ? rows.row(even) : nullptr;
        const uint16_t* odd_row = has_odd ? rows.row(even + 1) : nullptr;
        for (int32_t d = 0; d < head_dim; d += 16) {
            const __m512 a = has_even ? f16x16(even_row + d) : _mm512_setzero_ps();
            const __m512 b = has_odd ? f16x16(odd_row + d) : _mm512_setzero_ps();
            _mm512_store_si512(values + static_cast<int64_t>(j) * head_dim + d,
                               _mm512_permutexvar_epi16(interleave, bf16_pairs(a, b)));
        }
    }
}

// The groups of 16 positions of the chunk from chunk_begin that `window`
// touches, [begin, end) counted from the chunk's first group.
inline RowWindow touched_groups(int32_t chunk_begin, RowWindow window) {
    return {(window.begin - chunk_begin) / kKeyTilePositions,
            (window.end - chunk_begin + kKeyTilePositions - 1) / kKeyTilePositions};
}

// Where attend_chunk reads a chunk's keys and values from: the scratch the
// F16 rows were converted into, or the cache's own BF16 tiles (kv_tiles.h).
struct ChunkSources {
    // Group g's dimension pair i of 16 keys: key_groups[g] + i * key_pair_stride.
    const uint32_t* key_groups[kKeyGroups];
    int32_t key_pair_stride;
    // Position pair j's head_dim words, (v[2j][d], v[2j + 1][d]).
    const uint32_t* value_pairs[kAttentionChunk / 2];
};

// The tiles of the chunk after next, asked for while this chunk's keys are
// scored: its key groups and value blocks, each a run of head_dim x 32 bytes,
// one line of each run per dimension pair scored. Spread so, the requests do
// not queue up behind one another as a burst of the chunk's 512 lines would.
struct TilesAhead {
    const char* runs[2 * kKeyGroups];
    int32_t n_runs = 0;
};

// scores[r][16 g ..] = scale * q_r . k for n_rows rows and n_groups groups of
// 16 keys from group_begin.
template <int n_rows, int n_groups>
LADDER_AVX512_BF16 void score_block(const uint32_t* queries, int32_t n_pairs,
                                    const ChunkSources& sources, int32_t group_begin, float scale,
                                    const TilesAhead* ahead, float* scores) {
    __m512 acc[n_rows][n_groups];
    for (auto& row : acc) {
        for (auto& a : row) a = _mm512_setzero_ps();
    }
    // The groups' rows of pair i, advanced a pair at a time (held in registers).
    const uint32_t* key_rows[n_groups];
    for (int g = 0; g < n_groups; ++g) key_rows[g] = sources.key_groups[group_begin + g];
    const int64_t pair_stride = sources.key_pair_stride;
    for (int32_t i = 0; i < n_pairs; ++i) {
        __m512i q[n_rows];
        for (int r = 0; r < n_rows; ++r) q[r] = _mm512_set1_epi32(static_cast<int>(queries[r * n_pairs + i]));
        if (ahead != nullptr) {
            for (int32_t r = 0; r < ahead->n_runs; ++r) {
                _mm_prefetch(ahead->runs[r] + int64_t{i} * 64, _MM_HINT_T1);
            }
        }
        for (int g = 0; g < n_groups; ++g) {
            const __m512i k = _mm512_loadu_si512(key_rows[g]);
            key_rows[g] += pair_stride;
            for (int r = 0; r < n_rows; ++r) acc[r][g] = dot_pairs(acc[r][g], q[r], k);
        }
    }
    const __m512 scale16 = _mm512_set1_ps(scale);
    for (int r = 0; r < n_rows; ++r) {
        for (int g = 0; g < n_groups; ++g) {
            _mm512_store_ps(scores + r * kAttentionChunk + 16 * (group_begin + g),
                            opaque512(_mm512_mul_ps(acc[r][g], scale16)));
        }
    }
}

template <int n_rows>
LADDER_AVX512_BF16 void score_rows(const uint32_t* queries, int32_t n_pairs,
                                   const ChunkSources& keys, int32_t group_begin,
                                   int32_t group_end, float scale, const TilesAhead* ahead,
                                   float* scores) {
    switch (group_end - group_begin) {
        case 1: return score_block<n_rows, 1>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        case 2: return score_block<n_rows, 2>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        case 3: return score_block<n_rows, 3>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        case 4: return score_block<n_rows, 4>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        case 5: return score_block<n_rows, 5>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        case 6: return score_block<n_rows, 6>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        case 7: return score_block<n_rows, 7>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
        default: return score_block<n_rows, 8>(queries, n_pairs, keys, group_begin, scale, ahead, scores);
    }
}

// Lanes of a group of 16 positions from group_position that lie in [begin, end).
LADDER_AVX512_BF16 inline __mmask16 lanes_in(int32_t group_position, int32_t begin, int32_t end) {
    const int32_t lo = std::clamp(begin - group_position, 0, 16);
    const int32_t hi = std::clamp(end - group_position, 0, 16);
    if (lo >= hi) return 0;
    const uint32_t upto_hi = hi == 16 ? 0xffffu : (1u << hi) - 1u;
    return static_cast<__mmask16>(upto_hi & ~((1u << lo) - 1u));
}

// One row's softmax over its positions [row.begin, row.end): the max, the
// exponentials (0 elsewhere) as BF16 pairs over groups [pair_group_begin,
// pair_group_end) (an even range), and their sum.
LADDER_AVX512_BF16 void softmax_row(float* scores, int32_t chunk_begin, RowWindow row,
                                    int32_t pair_group_begin, int32_t pair_group_end,
                                    float* max_out, float* sum_out) {
    __m512 max16 = _mm512_set1_ps(-INFINITY);
    for (int32_t g = pair_group_begin; g < pair_group_end; ++g) {
        const __mmask16 mask = lanes_in(chunk_begin + 16 * g, row.begin, row.end);
        max16 = _mm512_mask_max_ps(max16, mask, _mm512_load_ps(scores + 16 * g), max16);
    }
    const float max_score = _mm512_reduce_max_ps(max16);
    const __m512 max_vector = _mm512_set1_ps(max_score);
    const __m512 floor16 = _mm512_set1_ps(kMinExponent);
    __m512 lanes = _mm512_setzero_ps();
    auto* pairs = reinterpret_cast<uint32_t*>(scores);
    for (int32_t g = pair_group_begin; g < pair_group_end; g += 2) {
        __m512 e[2];
        for (int h = 0; h < 2; ++h) {
            const __mmask16 mask = lanes_in(chunk_begin + 16 * (g + h), row.begin, row.end);
            const __m512 x = _mm512_sub_ps(_mm512_load_ps(scores + 16 * (g + h)), max_vector);
            e[h] = _mm512_maskz_mov_ps(mask, fast_exp_in_range(_mm512_max_ps(x, floor16)));
            lanes = _mm512_add_ps(lanes, e[h]);
        }
        // Read before written: the pairs of groups g, g + 1 land on group g / 2's words.
        _mm512_store_si512(pairs + 8 * g, bf16_pairs(e[0], e[1]));
    }
    const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lanes), 1));
    const __m256 halves = _mm256_add_ps(_mm512_castps512_ps256(lanes), high);
    *max_out = max_score;
    *sum_out = hsum(halves);
}

// o[r][d0 ..] += weighted values of pairs [pair_begin, pair_end) for
// n_rows rows and n_vectors vectors of 16 dimensions from d0.
template <int n_rows, int n_vectors>
LADDER_AVX512_BF16 void weight_block(const float* scores, const ChunkSources& values,
                                     int32_t head_dim, int32_t d0, int32_t pair_begin,
                                     int32_t pair_end, float* o) {
    __m512 acc[n_rows][n_vectors];
    for (auto& row : acc) {
        for (auto& a : row) a = _mm512_setzero_ps();
    }
    const auto* pairs = reinterpret_cast<const uint32_t*>(scores);
    for (int32_t j = pair_begin; j < pair_end; ++j) {
        __m512i p[n_rows];
        for (int r = 0; r < n_rows; ++r) {
            p[r] = _mm512_set1_epi32(static_cast<int>(pairs[r * kAttentionChunk + j]));
        }
        const uint32_t* value_row = values.value_pairs[j] + d0;
        for (int v = 0; v < n_vectors; ++v) {
            const __m512i x = _mm512_loadu_si512(value_row + 16 * v);
            for (int r = 0; r < n_rows; ++r) acc[r][v] = dot_pairs(acc[r][v], p[r], x);
        }
    }
    for (int r = 0; r < n_rows; ++r) {
        for (int v = 0; v < n_vectors; ++v) {
            _mm512_storeu_ps(o + r * head_dim + d0 + 16 * v, acc[r][v]);
        }
    }
}

// Up to 6 rows x 4 vectors (64 dimensions) per block: 24 accumulators.
template <int n_rows>
LADDER_AVX512_BF16 void weight_rows(const float* scores, const ChunkSources& values,
                                    int32_t head_dim, int32_t pair_begin, int32_t pair_end,
                                    float* o) {
    for (int32_t d0 = 0; d0 < head_dim; d0 += 64) {
        switch (std::min<int32_t>(4, (head_dim - d0) / 16)) {
            case 1: weight_block<n_rows, 1>(scores, values, head_dim, d0, pair_begin, pair_end, o); break;
            case 2: weight_block<n_rows, 2>(scores, values, head_dim, d0, pair_begin, pair_end, o); break;
            case 3: weight_block<n_rows, 3>(scores, values, head_dim, d0, pair_begin, pair_end, o); break;
            default: weight_block<n_rows, 4>(scores, values, head_dim, d0, pair_begin, pair_end, o); break;
        }
    }
}

// A chunk of a cache of F16 rows: its keys and value pairs converted into
// the scratch, the sources pointing there.
LADDER_AVX512_BF16 void convert_f16_chunk(const PagedKvLayer& kv, int32_t kv_head,
                                          const int32_t* block_table, int32_t chunk_begin,
                                          RowWindow window, int32_t group_begin,
                                          int32_t group_end, int32_t pair_begin, int32_t pair_end,
                                          const ChunkScratch& scratch, ChunkSources& sources) {
    const int32_t head_dim = kv.head_dim;
    auto* keys = reinterpret_cast<uint32_t*>(scratch.keys);
    auto* values = reinterpret_cast<uint32_t*>(scratch.values);
    load_keys(PagedRows(kv.f16_keys(), block_table, kv, kv_head), head_dim, chunk_begin, window,
              group_begin, group_end, keys);
    load_values(PagedRows(kv.f16_values(), block_table, kv, kv_head), head_dim, chunk_begin,
                window, pair_begin, pair_end, values);
    for (int32_t g = group_begin; g < group_end; ++g) sources.key_groups[g] = keys + 16 * g;
    sources.key_pair_stride = kPairStride;
    for (int32_t j = pair_begin; j < pair_end; ++j) {
        sources.value_pairs[j] = values + static_cast<int64_t>(j) * head_dim;
    }
}

// Where one head's tiles of a position lie in a layer's pools.
class TileAddresses {
public:
    TileAddresses(const PagedKvLayer& kv, int32_t kv_head, const int32_t* block_table)
        : kv_(kv),
          block_table_(block_table),
          head_words_(int64_t{kv.block_size} * kv.head_dim / 2),
          head_offset_(kv_head * head_words_),
          block_words_(head_words_ * kv.n_kv_heads) {}

    // The 16-key group of `position` (a multiple of 16): its pair i at + 16 i.
    const uint32_t* key_group(int32_t position) const {
        return head_block(kv_.keys, position) +
               int64_t{position % kv_.block_size / kKeyTilePositions} * (kv_.head_dim / 2) *
                   kKeyTilePositions;
    }
    // The value pair of `position` (even): head_dim words. The pairs after
    // it in its block follow it, head_dim words apart.
    const uint32_t* value_pair(int32_t position) const {
        return head_block(kv_.values, position) +
               int64_t{position % kv_.block_size / 2} * kv_.head_dim;
    }
    // Value pairs from `position` (even) to the end of its block.
    int32_t pairs_left_in_block(int32_t position) const {
        return (kv_.block_size - position % kv_.block_size) / 2;
    }

private:
    const uint32_t* head_block(const void* pool, int32_t position) const {
        return static_cast<const uint32_t*>(pool) +
               block_table_[position / kv_.block_size] * block_words_ + head_offset_;
    }

    const PagedKvLayer& kv_;
    const int32_t* block_table_;
    int64_t head_words_;
    int64_t head_offset_;
    int64_t block_words_;
};

// A copy of a value pair with the 16-bit halves outside `keep` zeroed.
LADDER_AVX512_BF16 const uint32_t* copy_pair_half(const uint32_t* pair, int32_t head_dim,
                                                  __mmask32 keep, uint32_t* copy) {
    for (int32_t d = 0; d < head_dim; d += 16) {
        _mm512_storeu_si512(copy + d, _mm512_maskz_mov_epi16(keep, _mm512_loadu_si512(pair + d)));
    }
    return copy;
}

// A chunk of a cache of BF16 tiles (kv_tiles.h): the sources point into the
// tiles, which hold the layouts above. Keys of a group's positions outside
// the window are read and masked out of the softmax. A value pair with one
// position outside the window (the window's first or last pair) is copied
// into the scratch with that half zeroed: its slot may hold anything, and a
// probability of 0 times a NaN would be a NaN.
LADDER_AVX512_BF16 void point_at_tiles(const TileAddresses& tiles, int32_t head_dim,
                                       int32_t chunk_begin, RowWindow window, int32_t group_begin,
                                       int32_t group_end, int32_t pair_begin, int32_t pair_end,
                                       const ChunkScratch& scratch, ChunkSources& sources) {
    for (int32_t g = group_begin; g < group_end; ++g) {
        sources.key_groups[g] = tiles.key_group(chunk_begin + kKeyTilePositions * g);
    }
    sources.key_pair_stride = kKeyTilePositions;
    // A block's pairs in turn, one address lookup per block.
    for (int32_t j = pair_begin; j < pair_end;) {
        const int32_t even = chunk_begin + 2 * j;
        const int32_t run_end = std::min(pair_end, j + tiles.pairs_left_in_block(even));
        const uint32_t* pair = tiles.value_pair(even);
        for (; j < run_end; ++j, pair += head_dim) sources.value_pairs[j] = pair;
    }
    // The window's edge pairs where it splits them (its first pair when it
    // begins at an odd position, its last when it ends at one).
    auto* edges = reinterpret_cast<uint32_t*>(scratch.values);
    // The even position's value is each word's low half.
    if ((window.begin - chunk_begin) % 2 != 0) {
        sources.value_pairs[pair_begin] =
            copy_pair_half(sources.value_pairs[pair_begin], head_dim, 0xaaaaaaaau, edges);
    }
    if ((window.end - chunk_begin) % 2 != 0) {
        sources.value_pairs[pair_end - 1] = copy_pair_half(sources.value_pairs[pair_end - 1],
                                                           head_dim, 0x55555555u, edges + head_dim);
    }
}

// The runs of the 16-position groups `window` (of the chunk from chunk_begin) touches.
TilesAhead tiles_ahead(const TileAddresses& tiles, int32_t chunk_begin, RowWindow window) {
    TilesAhead ahead;
    if (window.begin >= window.end) return ahead;
    const RowWindow groups = touched_groups(chunk_begin, window);
    for (int32_t g = groups.begin; g < groups.end; ++g) {
        const int32_t position = chunk_begin + kKeyTilePositions * g;
        ahead.runs[ahead.n_runs++] = reinterpret_cast<const char*>(tiles.key_group(position));
        ahead.runs[ahead.n_runs++] = reinterpret_cast<const char*>(tiles.value_pair(position));
    }
    return ahead;
}

LADDER_AVX512_BF16 void attend_chunk(const AttentionTile& tile, const PagedKvLayer& kv,
                                     int32_t kv_head, const int32_t* block_table, float scale,
                                     int32_t chunk, const ChunkScratch& scratch) {
    const int32_t head_dim = kv.head_dim;
    const int32_t n_pairs = head_dim / 2;
    const int32_t n_rows = tile.n_rows();
    const int32_t chunk_begin = chunk * kAttentionChunk;
    const RowWindow window = tile_window(tile, chunk);
    if (window.begin >= window.end) {
        std::fill_n(scratch.sum, n_rows, 0.0f);
        return;
    }
    // The groups of 16 positions the window touches, widened to whole pairs
    // of groups for the BF16 probability pairs; the position pairs it
    // touches (the others have probability 0 in every row, and adding their
    // exact zeros would change no bit).
    const RowWindow groups = touched_groups(chunk_begin, window);
    const int32_t group_begin = groups.begin;
    const int32_t group_end = groups.end;
    const int32_t pair_group_begin = group_begin & ~1;
    const int32_t pair_group_end = std::min(kKeyGroups, (group_end + 1) & ~1);
    const int32_t pair_begin = (window.begin - chunk_begin) / 2;
    const int32_t pair_end = (window.end - chunk_begin + 1) / 2;

    ChunkSources sources;
    TilesAhead ahead;
    if (kv.is_f16()) {
        // The next chunk's rows, while this one converts: without it the
        // conversions wait on memory at depth (Zen 4, kernels_bench
        // attention_depth from memory: 1.1-1.2x; the F32 paths gain nothing).
        prefetch_chunk(kv, kv_head, block_table, tile_window(tile, chunk + 1));
        convert_f16_chunk(kv, kv_head, block_table, chunk_begin, window, group_begin, group_end,
                          pair_begin, pair_end, scratch, sources);
    } else {
        const TileAddresses tiles(kv, kv_head, block_table);
        point_at_tiles(tiles, head_dim, chunk_begin, window, group_begin, group_end, pair_begin,
                       pair_end, scratch, sources);
        ahead = tiles_ahead(tiles, chunk_begin + 2 * kAttentionChunk, tile_window(tile, chunk + 2));
    }

    const auto* queries = reinterpret_cast<const uint32_t*>(scratch.queries);
    for (int32_t r = 0; r < n_rows; r += 3) {
        const uint32_t* q = queries + r * n_pairs;
        float* scores = scratch.scores + r * kAttentionChunk;
        const TilesAhead* asks = r == 0 ? &ahead : nullptr;  // the first rows ask
        switch (std::min(3, n_rows - r)) {
            case 1: score_rows<1>(q, n_pairs, sources, group_begin, group_end, scale, asks, scores); break;
            case 2: score_rows<2>(q, n_pairs, sources, group_begin, group_end, scale, asks, scores); break;
            default: score_rows<3>(q, n_pairs, sources, group_begin, group_end, scale, asks, scores); break;
        }
    }
    for (int32_t r = 0; r < n_rows; ++r) {
        const RowWindow row = row_window(tile, r, chunk);
        float* scores = scratch.scores + r * kAttentionChunk;
        if (row.begin >= row.end) {
            // Nothing to see: zero probabilities, so the shared pair loop adds nothing.
            std::memset(scores + 8 * pair_group_begin, 0,
                        sizeof(float) * 8 * static_cast<size_t>(pair_group_end - pair_group_begin));
            scratch.sum[r] = 0.0f;
            scratch.max[r] = 0.0f;
            continue;
        }
        softmax_row(scores, chunk_begin, row, pair_group_begin, pair_group_end, &scratch.max[r],
                    &scratch.sum[r]);
    }
    // n_rows x 4 vectors <= 24 accumulators.
    for (int32_t r = 0; r < n_rows; r += 6) {
        const float* scores = scratch.scores + r * kAttentionChunk;
        float* o = scratch.o + static_cast<int64_t>(r) * head_dim;
        switch (std::min(6, n_rows - r)) {
            case 1: weight_rows<1>(scores, sources, head_dim, pair_begin, pair_end, o); break;
            case 2: weight_rows<2>(scores, sources, head_dim, pair_begin, pair_end, o); break;
            case 3: weight_rows<3>(scores, sources, head_dim, pair_begin, pair_end, o); break;
            case 4: weight_rows<4>(scores, sources, head_dim, pair_begin, pair_end, o); break;
            case 5: weight_rows<5>(scores, sources, head_dim, pair_begin, pair_end, o); break;
            default: weight_rows<6>(scores, sources, head_dim, pair_begin, pair_end, o); break;
        }
    }
}

// The layers this path reads: F16 rows, converted a chunk at a time, and
// BF16 tiles, read as they lie.
bool reads(const PagedKvLayer& kv) {
    return kv.is_f16() ||
           (stored_in_tiles(kv.key_type) && stored_in_tiles(kv.value_type));
}

}  // namespace

const ChunkOps kAvx512Bf16ChunkOps{reads, load_queries, attend_chunk, merge_avx2, finish_avx2};

}  // namespace ladder::kernels::cpu::detail
