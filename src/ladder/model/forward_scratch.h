// The activations of one forward step, shared by every architecture: grown to
// the largest batch seen and then reused, so steady-state decoding does not
// allocate.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/matmul.h"
#include "ladder/model/model_config.h"
#include "ladder/util/thread_pool.h"

namespace ladder::model {

struct ForwardScratch {
    int64_t capacity_rows = 0;
    std::vector<float> x;     // [T, dim] residual stream
    std::vector<float> xb;    // [T, dim] normed input of a block
    std::vector<float> q;     // [T, q_dim]
    std::vector<float> k;     // [T, kv_dim]
    std::vector<float> v;     // [T, kv_dim]
    std::vector<float> attn;  // [T, q_dim] attention output
    std::vector<float> gate;  // [T, hidden_dim]
    std::vector<float> up;    // [T, hidden_dim]
    std::vector<float> out;   // [T, dim] projection output before the residual add
    // Activations quantized for the integer dot products: one buffer per
    // activation type a project() call needs (Q, K and V may pair with two).
    static constexpr size_t kMaxActivationTypes = 3;
    std::vector<uint8_t> quantized[kMaxActivationTypes];
    std::vector<float> scores;          // [chunks, longest context] attention score rows
    std::vector<int32_t> row_sequence;  // [T] which sequence each row belongs to

    // The fast attention's work of one layer (paged_attention_chunked.cpp):
    // tiles of query rows, the pieces of their chunks threads take, and what
    // they need to hand over.
    struct AttentionTileWork {
        int32_t sequence;
        int32_t kv_head;
        int32_t first_token;  // in the sequence's rows of this step
        int32_t n_tokens;
        int32_t first_chunk;
        int32_t end_chunk;
        int64_t partials_offset;  // < 0: one piece, which writes the output itself
    };
    struct AttentionPiece {
        int32_t tile;
        int32_t n_tiles;  // tiles [tile, tile + n_tiles): a few tokens' KV heads, read in turn
        int32_t chunk_begin;
        int32_t chunk_end;
        int64_t cost;  // rows x chunks x tiles: the longest pieces start first
    };
    std::vector<AttentionTileWork> attention_tiles;
    std::vector<AttentionPiece> attention_pieces;
    std::vector<int32_t> split_tiles;               // tiles whose pieces left partials
    std::vector<int32_t> first_visible;             // [T] first position each row sees
    std::vector<int32_t> end_visible;               // [T] its position + 1
    std::vector<float> attention_partials;          // the split tiles' chunk softmaxes
    std::vector<float> attention_thread_scratch;    // [threads][chunked_attention_scratch_floats]

    // The exact attention split over positions and dimensions
    // (paged_attention_split.cpp): one (token, KV head) pair's query heads,
    // where its scores and group sums live, and the pieces threads take.
    struct SplitAttentionPair {
        int32_t row;
        int32_t kv_head;
        int32_t first_visible;
        int32_t n_visible;
        const int32_t* block_table;
        int64_t scores_offset;  // [heads][positions] in split_scores
        int64_t sums_offset;    // [heads][softmax groups] in split_group_sums
    };
    struct SplitAttentionPiece {
        int32_t pair;
        kernels::cpu::IndexRange range;  // positions or dimensions
    };
    std::vector<SplitAttentionPair> split_pairs;
    std::vector<SplitAttentionPiece> split_position_pieces;
    std::vector<SplitAttentionPiece> split_dim_pieces;
    std::vector<float> split_scores;
    std::vector<float> split_group_sums;
    std::vector<float> split_max;       // [position pieces][heads]
    std::vector<float> split_pair_max;  // [pairs][heads]
    std::vector<float> split_probabilities;
    std::vector<int64_t> split_probability_offsets;  // [dimension pieces]

    // Makes room for n_rows rows of every buffer (scores grow on demand).
    void ensure(const ModelConfig& config, int64_t n_rows);

    // One linear layer of a project() call: out [n_rows, w->n_out] = x . w^T.
    struct Projection {
        const kernels::cpu::WeightMatrix* w;
        float* out;
    };

    // Every projection of the same input x [n_rows, n_in] (Q, K and V; gate
    // and up): x is quantized once per activation type they need, and the
    // products run as one matmul_group, one parallel region for all.
    void project(std::initializer_list<Projection> projections, const float* x, int64_t n_rows,
                 util::ThreadPool& pool);
};

}  // namespace ladder::model
