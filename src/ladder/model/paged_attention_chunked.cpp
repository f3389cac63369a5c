// The fast attention's schedule over a batch: every sequence's rows become
// tiles (its tokens x the query heads of one KV head, up to kMaxTileRows),
// and every tile's chunks are one piece of work, or several when there are
// too few tiles to keep the threads busy (one sequence decoding: each chunk
// range of its context on another thread). How the work is split never
// changes a result: a piece computes whole chunks, and the chunks merge in
// the same order wherever they were computed.
#include <algorithm>
#include <atomic>

#include "ladder/kernels/cpu/chunked_attention.h"
#include "ladder/model/paged_attention.h"
#include "ladder/util/check.h"
#include "ladder/util/thread_pool.h"

namespace ladder::model {

namespace {

namespace cpu = kernels::cpu;

using TileWork = ForwardScratch::AttentionTileWork;
using Piece = ForwardScratch::AttentionPiece;

// Pieces per thread below which tiles are split: enough that the threads
// finish together whatever the tiles' lengths.
constexpr int64_t kPiecesPerThread = 8;

void plan_tiles(const Batch& batch, const ModelConfig& config, int32_t window,
                ForwardScratch& scratch) {
    const int32_t group = config.n_heads / config.n_kv_heads;
    const int32_t tokens_per_tile = std::max(1, cpu::kMaxTileRows / group);
    scratch.first_visible.resize(static_cast<size_t>(batch.n_tokens()));
    scratch.end_visible.resize(static_cast<size_t>(batch.n_tokens()));
    for (int32_t row = 0; row < batch.n_tokens(); ++row) {
        const int32_t position = batch.positions[static_cast<size_t>(row)];
        scratch.first_visible[static_cast<size_t>(row)] =
            window > 0 ? std::max(0, position - window + 1) : 0;
        scratch.end_visible[static_cast<size_t>(row)] = position + 1;
    }
    scratch.attention_tiles.clear();
    for (size_t s = 0; s < batch.sequences.size(); ++s) {
        const BatchSequence& sequence = batch.sequences[s];
        for (int32_t t0 = 0; t0 < sequence.n_tokens; t0 += tokens_per_tile) {
            const int32_t n_tokens = std::min(tokens_per_tile, sequence.n_tokens - t0);
            const int32_t first_row = sequence.first_row + t0;
            const cpu::AttentionTile rows{
                nullptr, nullptr, 0, n_tokens, group, scratch.first_visible.data() + first_row,
                scratch.end_visible.data() + first_row};
            for (int32_t kv_head = 0; kv_head < config.n_kv_heads; ++kv_head) {
                scratch.attention_tiles.push_back({static_cast<int32_t>(s), kv_head, t0, n_tokens,
                                                   rows.first_chunk(), rows.end_chunk(), -1});
            }
        }
    }
}

// The tiles of a few tokens (a decode row, or a step verifying drafted
// tokens: up to kMostTurnTokens, one tile per KV head) are one unit of work,
// whose chunks do little arithmetic per byte they read. A piece of it reads
// a contiguous range of chunks, the KV heads in turn kHeadTurnChunks chunks
// at a time. A block holds every head's K (V) side by side, so the turns
// read each block's whole run of lines, which the hardware prefetchers
// follow; a head alone reads a third of each run. A piece spans at least
// kMinTurnPieceChunks chunks where there are enough threads' worth of them:
// a thread's stream then runs long (SmolLM2 at 4,096 positions, two
// threads: 27-31 GB/s in halves, against 15-16 for a head per thread and
// 18-22 for short pieces taken in turn; steps of 2 to 8 rows 5-10% quicker
// than a head at a time; docs/performance.md). The unit's chunks go to
// partials, merged after.
constexpr int32_t kHeadTurnChunks = 2;
constexpr int32_t kMinTurnPieceChunks = 16;
constexpr int32_t kMostTurnTokens = 8;

bool reads_heads_in_turn(const TileWork& tile, const ModelConfig& config) {
    return tile.n_tokens <= kMostTurnTokens && config.n_kv_heads > 1;
}

// Splits the tiles' chunks into pieces; a split tile gets room for its partials.
void plan_pieces(const ModelConfig& config, int n_threads, ForwardScratch& scratch) {
    const int32_t group = config.n_heads / config.n_kv_heads;
    const auto n_tiles = static_cast<int32_t>(scratch.attention_tiles.size());
    // Units of work: a tile, or a few tokens' tiles together.
    int64_t n_units = 0;
    for (int32_t t = 0; t < n_tiles; ++t) {
        const TileWork& tile = scratch.attention_tiles[static_cast<size_t>(t)];
        if (!reads_heads_in_turn(tile, config) || tile.kv_head == 0) ++n_units;
    }
    const int64_t target = int64_t{n_threads} * kPiecesPerThread;
    const int64_t pieces_per_unit =
        n_threads == 1 || n_units >= target ? 1 : (target + n_units - 1) / n_units;
    scratch.attention_pieces.clear();
    scratch.split_tiles.clear();
    int64_t partial_floats = 0;
    for (int32_t t = 0; t < n_tiles;) {
        const TileWork& first = scratch.attention_tiles[static_cast<size_t>(t)];
        const bool in_turn = reads_heads_in_turn(first, config);
        const int32_t unit_tiles = in_turn ? config.n_kv_heads : 1;
        const int32_t n_chunks = first.end_chunk - first.first_chunk;
        const int32_t rows = first.n_tokens * group;
        const int32_t most_pieces =
            in_turn ? std::max(n_threads, n_chunks / kMinTurnPieceChunks) : n_chunks;
        const auto n_pieces =
            static_cast<int32_t>(std::min<int64_t>({pieces_per_unit, most_pieces, n_chunks}));
        if (!in_turn && n_pieces <= 1) {
            scratch.attention_pieces.push_back(
                {t, 1, first.first_chunk, first.end_chunk, int64_t{rows} * n_chunks});
            ++t;
            continue;
        }
        // The unit's tiles cover the same tokens, so the same chunks.
        for (int32_t u = t; u < t + unit_tiles; ++u) {
            scratch.attention_tiles[static_cast<size_t>(u)].partials_offset = partial_floats;
            partial_floats += int64_t{n_chunks} * rows * (config.head_dim + 2);
            scratch.split_tiles.push_back(u);
        }
        for (int32_t p = 0; p < n_pieces; ++p) {
            const int32_t begin = first.first_chunk + n_chunks * p / n_pieces;
            const int32_t end = first.first_chunk + n_chunks * (p + 1) / n_pieces;
            scratch.attention_pieces.push_back(
                {t, unit_tiles, begin, end, int64_t{rows} * (end - begin) * unit_tiles});
        }
        t += unit_tiles;
    }
    // Longest first, so the last pieces to start are short ones.
    std::stable_sort(scratch.attention_pieces.begin(), scratch.attention_pieces.end(),
                     [](const Piece& a, const Piece& b) { return a.cost > b.cost; });
    if (scratch.attention_partials.size() < static_cast<size_t>(partial_floats)) {
        scratch.attention_partials.resize(static_cast<size_t>(partial_floats));
    }
}

// Runs body(item, thread scratch) for items [0, n) on every thread, each
// thread taking the next item until none is left.
template <typename Body>
void for_each_item(int64_t n, float* thread_scratch, size_t scratch_floats,
                   util::ThreadPool& pool, const Body& body) {
    std::atomic<int64_t> next{0};
    const int64_t n_workers = std::min<int64_t>(n, pool.n_threads());
    pool.parallel_for(n_workers, [&](int64_t worker) {
        float* own = thread_scratch + static_cast<size_t>(worker) * scratch_floats;
        for (int64_t item = next.fetch_add(1); item < n; item = next.fetch_add(1)) {
            body(item, own);
        }
    });
}

}  // namespace

void chunked_paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                             const ModelConfig& config, float scale, int32_t window,
                             ForwardScratch& scratch, util::ThreadPool& pool) {
    if (batch.n_tokens() == 0) return;
    const cpu::PagedKvLayer kv_layer = paged_kv_layer(kv, layer);
    const int32_t head_dim = config.head_dim;
    const int32_t group = config.n_heads / config.n_kv_heads;
    plan_tiles(batch, config, window, scratch);
    plan_pieces(config, pool.n_threads(), scratch);
    const size_t scratch_floats = cpu::chunked_attention_scratch_floats(head_dim);
    const size_t all_scratch = scratch_floats * static_cast<size_t>(pool.n_threads());
    if (scratch.attention_thread_scratch.size() < all_scratch) {
        scratch.attention_thread_scratch.resize(all_scratch);
    }

    const cpu::ChunkedAttentionKernels& kernels = cpu::chunked_attention();
    const auto tile_rows = [&](const TileWork& work) {
        const BatchSequence& sequence = batch.sequences[static_cast<size_t>(work.sequence)];
        const int32_t first_row = sequence.first_row + work.first_token;
        const int64_t offset = int64_t{first_row} * config.q_dim() +
                               int64_t{work.kv_head} * group * head_dim;
        return cpu::AttentionTile{scratch.q.data() + offset,
                                  scratch.attn.data() + offset,
                                  config.q_dim(),
                                  work.n_tokens,
                                  group,
                                  scratch.first_visible.data() + first_row,
                                  scratch.end_visible.data() + first_row};
    };
    const auto partials_of = [&](const TileWork& work, int32_t first_chunk) {
        const int64_t rows = int64_t{work.n_tokens} * group;
        const int64_t n_chunks = work.end_chunk - work.first_chunk;
        float* base = scratch.attention_partials.data() + work.partials_offset;
        const int64_t skip = first_chunk - work.first_chunk;
        float* o = base;
        float* max = base + n_chunks * rows * head_dim;
        float* sum = max + n_chunks * rows;
        return cpu::ChunkPartials{o + skip * rows * head_dim, max + skip * rows, sum + skip * rows};
    };
    const auto blocks_of = [&](const TileWork& work) {
        const BatchSequence& sequence = batch.sequences[static_cast<size_t>(work.sequence)];
        return kv.in_window_group(layer) ? sequence.window_block_table.data()
                                         : sequence.block_table.data();
    };

    // A piece's chunks of its tiles: merged into the output, or into
    // partials, the tiles in turn a few chunks at a time.
    const auto run_piece = [&](const Piece& piece, float* own) {
        const TileWork& first = scratch.attention_tiles[static_cast<size_t>(piece.tile)];
        if (first.partials_offset < 0) {
            kernels.attend(tile_rows(first), kv_layer, first.kv_head, blocks_of(first), scale,
                           piece.chunk_begin, piece.chunk_end, nullptr, own);
            return;
        }
        const int32_t turn =
            piece.n_tiles > 1 ? kHeadTurnChunks : piece.chunk_end - piece.chunk_begin;
        for (int32_t begin = piece.chunk_begin; begin < piece.chunk_end; begin += turn) {
            const int32_t end = std::min(piece.chunk_end, begin + turn);
            for (int32_t t = piece.tile; t < piece.tile + piece.n_tiles; ++t) {
                const TileWork& work = scratch.attention_tiles[static_cast<size_t>(t)];
                const cpu::ChunkPartials partials = partials_of(work, begin);
                kernels.attend(tile_rows(work), kv_layer, work.kv_head, blocks_of(work), scale,
                               begin, end, &partials, own);
            }
        }
    };
    for_each_item(static_cast<int64_t>(scratch.attention_pieces.size()),
                  scratch.attention_thread_scratch.data(), scratch_floats, pool,
                  [&](int64_t index, float* own) {
                      run_piece(scratch.attention_pieces[static_cast<size_t>(index)], own);
                  });
    if (scratch.split_tiles.empty()) return;
    for_each_item(static_cast<int64_t>(scratch.split_tiles.size()),
                  scratch.attention_thread_scratch.data(), scratch_floats, pool,
                  [&](int64_t index, float* own) {
                      const TileWork& work = scratch.attention_tiles[static_cast<size_t>(
                          scratch.split_tiles[static_cast<size_t>(index)])];
                      kernels.merge(tile_rows(work), head_dim, partials_of(work, work.first_chunk),
                                    work.end_chunk - work.first_chunk, own);
                  });
}

}  // namespace ladder::model
