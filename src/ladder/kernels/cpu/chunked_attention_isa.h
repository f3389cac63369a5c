// Internal to kernels/cpu: what each path of chunked_attention.h implements
// (one chunk of a tile, the merge of chunk softmaxes), and the per-tile
// bookkeeping all paths share. The loop over chunks and the choice between
// merging and keeping partials live once, in chunked_attention.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "ladder/kernels/cpu/chunked_attention.h"

namespace ladder::kernels::cpu::detail {

// Which part of chunk `chunk` row r sees: [begin, end) in positions.
// Empty (begin >= end) when the row sees nothing of it.
struct RowWindow {
    int32_t begin;
    int32_t end;
};

inline RowWindow row_window(const AttentionTile& tile, int32_t row, int32_t chunk) {
    const int32_t token = row / tile.n_heads;
    const int32_t chunk_begin = chunk * kAttentionChunk;
    return {std::max(tile.first_visible[token], chunk_begin),
            std::min(tile.end_visible[token], chunk_begin + kAttentionChunk)};
}

// The positions of a chunk any row sees: the only ones a path reads from the
// cache (the block table may name no block elsewhere). The rows' windows
// together are one range, as a sequence's consecutive tokens' are.
inline RowWindow tile_window(const AttentionTile& tile, int32_t chunk) {
    RowWindow window{kAttentionChunk * (chunk + 1), kAttentionChunk * chunk};
    for (int32_t t = 0; t < tile.n_tokens; ++t) {
        const RowWindow row = row_window(tile, t * tile.n_heads, chunk);
        if (row.begin >= row.end) continue;
        window.begin = std::min(window.begin, row.begin);
        window.end = std::max(window.end, row.end);
    }
    return window;
}

// Scratch one tile's chunk works in, carved from the caller's floats.
struct ChunkScratch {
    float* queries;   // [kMaxTileRows][head_dim]: the path's dot form of the queries
    float* keys;      // [kAttentionChunk][head_dim]: the chunk's keys in the path's layout
    float* values;    // [kAttentionChunk][head_dim]: the same for values
    float* scores;    // [kMaxTileRows][kAttentionChunk]: scores, then probabilities
    float* o;         // [kMaxTileRows][head_dim]: the chunk's weighted values per row
    float* max;       // [kMaxTileRows]
    float* sum;       // [kMaxTileRows]
    float* state_o;   // [kMaxTileRows][head_dim]: the running merge of the chunks so far
    float* state_max;  // [kMaxTileRows]
    float* state_sum;  // [kMaxTileRows]; 0: nothing seen yet
};

ChunkScratch carve_chunk_scratch(float* scratch, int32_t head_dim);

// The F32 paths' chunk of K and V rows: position window.begin + j dequantized
// (or widened from F16) into row j of scratch.keys and scratch.values by the
// path's row ops, in any cache type: a block's run of rows in one call where
// the cache stores rows, one row at a time from tiles.
void load_chunk_rows(Isa isa, const PagedKvLayer& kv, int32_t kv_head, const int32_t* block_table,
                     RowWindow window, const ChunkScratch& scratch);

// Asks for the K and V rows of `window` (any cache type) to be brought
// into the cache: a path whose chunks wait on memory calls it for the next
// chunk while it computes this one. A sequence's blocks lie anywhere in the
// pool, so the hardware prefetcher does not run ahead of a chunk's rows.
void prefetch_chunk(const PagedKvLayer& kv, int32_t kv_head, const int32_t* block_table,
                    RowWindow window);

// One path's building blocks.
struct ChunkOps {
    // Whether attend_chunk reads this layer's cache types (nullptr: any type).
    bool (*reads)(const PagedKvLayer& kv);
    // The tile's queries into scratch.queries, in the form the path's dot product reads.
    void (*load_queries)(const AttentionTile& tile, int32_t head_dim, const ChunkScratch& scratch);
    // One chunk's softmax of every row of the tile into scratch.o / max / sum.
    void (*attend_chunk)(const AttentionTile& tile, const PagedKvLayer& kv, int32_t kv_head,
                         const int32_t* block_table, float scale, int32_t chunk,
                         const ChunkScratch& scratch);
    // Folds one chunk's softmax per row (o, max, sum; rows whose sum is 0 are
    // skipped) into the running state, row by row.
    void (*merge)(int32_t n_rows, int32_t head_dim, const float* o, const float* max,
                  const float* sum, const ChunkScratch& scratch);
    // tile.out = state_o / state_sum (0 where a row saw nothing).
    void (*finish)(const AttentionTile& tile, int32_t head_dim, const ChunkScratch& scratch);
};

extern const ChunkOps kScalarChunkOps;      // chunked_attention_scalar.cpp: the reference
extern const ChunkOps kAvx2ChunkOps;        // chunked_attention_avx2.cpp: bit-identical to it
extern const ChunkOps kAvx512Bf16ChunkOps;  // chunked_attention_avx512.cpp: BF16 dot products

// The avx2 path's merge and finish: F32 arithmetic whose bits do not depend
// on the vector width, which the BF16 path shares.
void merge_avx2(int32_t n_rows, int32_t head_dim, const float* o, const float* max,
                const float* sum, const ChunkScratch& scratch);
void finish_avx2(const AttentionTile& tile, int32_t head_dim, const ChunkScratch& scratch);

}  // namespace ladder::kernels::cpu::detail
