// The fast attention path (--attention fast): a sequence's KV is split along
// its length into chunks of kAttentionChunk positions; each chunk's softmax
// is computed on its own (its max, its sum, its weighted values) and the
// chunks are merged in position order. Decode splits the chunks of one token
// over the threads (flash-decoding); prefill runs tiles of many query rows
// against each chunk, so a K/V chunk is converted once and reused by every
// row of the tile (FlashAttention's blocking). Knows block tables and rows,
// not batches or sequences.
//
// Numerics: every row's result depends only on its query, the K/V of the
// positions it sees and the chunk grid (aligned to position 0), never on the
// other rows of a tile, on how the chunks were split over threads or on the
// thread count: the same bits in decode, in prefill and in any batch. The
// order of operations differs from llama.cpp's (attention.h, the exact
// path), so results differ in their last bits; each kernel path has its own
// dot product (scalar and avx2: F32 fma, bit-identical to each other;
// avx512 with AVX512-BF16: BF16 pairs into F32); how far the model's
// distributions move from the exact path's is measured by
// tests/model/test_attention_quality.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/cpu_features.h"
#include "ladder/tensor/dtype.h"

namespace ladder::kernels::cpu {

// Positions per chunk: a multiple of 32 (the widest lane group of any path).
constexpr int32_t kAttentionChunk = 128;
// Query rows of one tile: bounds its scratch (and so the cache it works in).
constexpr int32_t kMaxTileRows = 96;

// The query rows of one tile: n_tokens tokens of one sequence, each with the
// n_heads query heads that share one KV head, row r = token r / n_heads, head
// r % n_heads. Token t sees positions [first_visible[t], end_visible[t]).
struct AttentionTile {
    const float* q = nullptr;  // head h of token t: q + t * token_stride + h * head_dim
    float* out = nullptr;      // same layout as q
    int64_t token_stride = 0;  // floats from one token's heads to the next's
    int32_t n_tokens = 0;
    int32_t n_heads = 0;
    const int32_t* first_visible = nullptr;  // [n_tokens]
    const int32_t* end_visible = nullptr;    // [n_tokens]

    int32_t n_rows() const { return n_tokens * n_heads; }
    // The chunks any row sees: [first_chunk(), end_chunk()).
    int32_t first_chunk() const;
    int32_t end_chunk() const;
};

// Each chunk's softmax of each row, unmerged: what threads that split one
// tile's chunks hand to merge_chunk_partials. Chunk c (counted from the first
// one stored), row r: max[c * n_rows + r], sum[c * n_rows + r] (0: the row
// sees nothing of the chunk), o + (c * n_rows + r) * head_dim the weighted
// values (not yet divided by the sum).
struct ChunkPartials {
    float* o = nullptr;
    float* max = nullptr;
    float* sum = nullptr;
};

// Floats of scratch one call below needs (one per thread), for any tile.
size_t chunked_attention_scratch_floats(int32_t head_dim);

// One path's kernels. head_dim must be a multiple of 32 and at most
// kMaxHeadDim; a tile has 1 to kMaxTileRows rows.
struct ChunkedAttentionKernels {
    std::string_view name;  // "scalar", "avx2", "avx512-bf16"
    // The cache type `--kv-cache-dtype auto` stores for this path: BF16 for
    // avx512-bf16, which reads its tiles as they lie (kv_tiles.h; its
    // products round K and V to BF16 anyway, so an F16 cache only adds a
    // rounding), F16 for the F32 paths.
    tensor::DType auto_kv_type;
    // Attends the tile over chunks [chunk_begin, chunk_end). partials null:
    // the chunks are merged in order and the result written to tile.out,
    // so the range must hold every chunk a row sees. Otherwise each chunk's
    // softmax goes to partials and tile.out is not touched.
    void (*attend)(const AttentionTile& tile, const PagedKvLayer& kv, int32_t kv_head,
                   const int32_t* block_table, float scale, int32_t chunk_begin,
                   int32_t chunk_end, const ChunkPartials* partials, float* scratch);
    // Merges n_chunks partials per row in chunk order into tile.out: the same
    // bits attend() with null partials gives over the same chunks.
    void (*merge)(const AttentionTile& tile, int32_t head_dim, const ChunkPartials& partials,
                  int32_t n_chunks, float* scratch);
};

// The kernels of the path cpu_kernels() chose (LADDER_CPU); avx512 uses BF16
// dot products where the CPU has AVX512-BF16, else the avx2 kernels.
const ChunkedAttentionKernels& chunked_attention();
// The kernels of a path, for tests and benchmarks (the CPU must support it).
const ChunkedAttentionKernels& chunked_attention_for(Isa isa);
// Every path this CPU runs, the scalar reference first.
std::vector<const ChunkedAttentionKernels*> supported_chunked_attention();

}  // namespace ladder::kernels::cpu
