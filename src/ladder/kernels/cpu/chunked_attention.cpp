// The chunk loop every path shares, the choice of a path once per process,
// and the scratch layout. The per-chunk arithmetic lives in
// chunked_attention_<path>.cpp.
#include "ladder/kernels/cpu/chunked_attention.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <xmmintrin.h>

#include "ladder/kernels/cpu/chunked_attention_isa.h"
#include "ladder/kernels/cpu/kv_rows.h"
#include "ladder/kernels/cpu/kv_tiles.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

int32_t AttentionTile::first_chunk() const {
    int32_t first = std::numeric_limits<int32_t>::max();
    for (int32_t t = 0; t < n_tokens; ++t) {
        if (first_visible[t] < end_visible[t]) first = std::min(first, first_visible[t]);
    }
    return first == std::numeric_limits<int32_t>::max() ? 0 : first / kAttentionChunk;
}

int32_t AttentionTile::end_chunk() const {
    int32_t end = 0;
    for (int32_t t = 0; t < n_tokens; ++t) {
        if (first_visible[t] < end_visible[t]) end = std::max(end, end_visible[t]);
    }
    return (end + kAttentionChunk - 1) / kAttentionChunk;
}

namespace detail {

namespace {

// Every buffer starts on a cache line: the paths load them with aligned
// 512-bit moves.
constexpr size_t kAlignFloats = 16;

size_t aligned(size_t floats) { return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

struct ScratchSizes {
    size_t queries, keys, values, scores, o, row;
};

ScratchSizes scratch_sizes(int32_t head_dim) {
    const auto rows = static_cast<size_t>(kMaxTileRows);
    const auto chunk = static_cast<size_t>(kAttentionChunk);
    const auto dim = static_cast<size_t>(head_dim);
    return {aligned(rows * dim), aligned(chunk * dim), aligned(chunk * dim),
            aligned(rows * chunk), aligned(rows * dim), aligned(rows)};
}

}  // namespace

ChunkScratch carve_chunk_scratch(float* scratch, int32_t head_dim) {
    const ScratchSizes sizes = scratch_sizes(head_dim);
    // The caller's buffer is rounded up to the next cache line.
    const auto address = reinterpret_cast<uintptr_t>(scratch);
    float* p = reinterpret_cast<float*>((address + 63) & ~uintptr_t{63});
    const auto take = [&](size_t floats) {
        float* begin = p;
        p += floats;
        return begin;
    };
    ChunkScratch out{};
    out.queries = take(sizes.queries);
    out.keys = take(sizes.keys);
    out.values = take(sizes.values);
    out.scores = take(sizes.scores);
    out.o = take(sizes.o);
    out.max = take(sizes.row);
    out.sum = take(sizes.row);
    out.state_o = take(sizes.o);
    out.state_max = take(sizes.row);
    out.state_sum = take(sizes.row);
    return out;
}

namespace {

// One side's rows of `window` as F32, position p's at out + (p - window.begin)
// * head_dim. A head's rows within a pool block are contiguous, so each
// block's share of the window decodes in one call (a run of rows is one
// longer row to a decoder); rows kept in tiles are gathered one at a time.
// Row by row, a call and an address per position cost about 10% of a decode
// step's attention at 4,096 positions on AVX2 (kernels_bench, from L3).
void decode_window(DecodeKvRowFn decode, const PagedKvLayer& kv, KvRowReader::Side side,
                   const int32_t* block_table, int32_t kv_head, RowWindow window, float* out) {
    const int32_t head_dim = kv.head_dim;
    const bool keys = side == KvRowReader::Side::Keys;
    if (stored_in_tiles(keys ? kv.key_type : kv.value_type)) {
        KvRowReader rows(kv, side, block_table, kv_head);
        for (int32_t position = window.begin; position < window.end; ++position) {
            decode(rows(position), out + static_cast<int64_t>(position - window.begin) * head_dim,
                   head_dim);
        }
        return;
    }
    const void* pool = keys ? kv.keys : kv.values;
    const int64_t row_bytes = keys ? kv.key_row_bytes() : kv.value_row_bytes();
    for (int32_t position = window.begin; position < window.end;) {
        const int32_t run_end =
            std::min(window.end, (position / kv.block_size + 1) * kv.block_size);
        decode(kv.row(pool, row_bytes, block_table, kv_head, position),
               out + static_cast<int64_t>(position - window.begin) * head_dim,
               (run_end - position) * head_dim);
        position = run_end;
    }
}

}  // namespace

void load_chunk_rows(Isa isa, const PagedKvLayer& kv, int32_t kv_head, const int32_t* block_table,
                     RowWindow window, const ChunkScratch& scratch) {
    decode_window(kv_row_ops(isa, kv.key_type).decode, kv, KvRowReader::Side::Keys, block_table,
                  kv_head, window, scratch.keys);
    decode_window(kv_row_ops(isa, kv.value_type).decode, kv, KvRowReader::Side::Values, block_table,
                  kv_head, window, scratch.values);
}

// A head's K (V) within a block is contiguous: one run of lines per block,
// fetched into L2 (a chunk's K and V, 32 KiB for SmolLM2, would push the
// chunk's scratch out of L1). Tiles spread a position's words over its head
// block, so for them the whole head block is asked for.
void prefetch_chunk(const PagedKvLayer& kv, int32_t kv_head, const int32_t* block_table,
                    RowWindow window) {
    constexpr int64_t kLine = 64;
    const int64_t key_bytes = kv.key_row_bytes();
    const int64_t value_bytes = kv.value_row_bytes();
    const bool key_tiles = stored_in_tiles(kv.key_type);
    const bool value_tiles = stored_in_tiles(kv.value_type);
    for (int32_t position = window.begin; position < window.end;) {
        const int32_t block_start = position / kv.block_size * kv.block_size;
        const int32_t run_end = std::min(window.end, block_start + kv.block_size);
        const int32_t key_first = key_tiles ? block_start : position;
        const int32_t value_first = value_tiles ? block_start : position;
        const int64_t n_keys = (key_tiles ? block_start + kv.block_size : run_end) - key_first;
        const int64_t n_values =
            (value_tiles ? block_start + kv.block_size : run_end) - value_first;
        const uint8_t* keys = kv.row(kv.keys, key_bytes, block_table, kv_head, key_first);
        const uint8_t* values = kv.row(kv.values, value_bytes, block_table, kv_head, value_first);
        for (int64_t offset = 0; offset < n_keys * key_bytes; offset += kLine) {
            _mm_prefetch(reinterpret_cast<const char*>(keys + offset), _MM_HINT_T1);
        }
        for (int64_t offset = 0; offset < n_values * value_bytes; offset += kLine) {
            _mm_prefetch(reinterpret_cast<const char*>(values + offset), _MM_HINT_T1);
        }
        position = run_end;
    }
}

namespace {

void check_tile(const AttentionTile& tile, const PagedKvLayer& kv) {
    LADDER_CHECK(kv.head_dim % 32 == 0 && kv.head_dim <= kMaxHeadDim,
                 "chunked attention needs head_dim a multiple of 32, at most kMaxHeadDim");
    LADDER_CHECK(tile.n_rows() >= 1 && tile.n_rows() <= kMaxTileRows,
                 "attention tile rows outside 1..kMaxTileRows");
}

// Runs one path over a tile's chunks: merging each into the running state in
// chunk order, or keeping each chunk's softmax for a later merge.
void attend_with(const ChunkOps& ops, const AttentionTile& tile, const PagedKvLayer& kv,
                 int32_t kv_head, const int32_t* block_table, float scale, int32_t chunk_begin,
                 int32_t chunk_end, const ChunkPartials* partials, float* scratch_floats) {
    check_tile(tile, kv);
    const int32_t head_dim = kv.head_dim;
    const int32_t n_rows = tile.n_rows();
    const ChunkScratch scratch = carve_chunk_scratch(scratch_floats, head_dim);
    // A range's first chunks, which no earlier chunk of it asked for (a
    // decode step's ranges are a few chunks each: the threads' pieces).
    for (int32_t chunk = chunk_begin; chunk < std::min(chunk_end, chunk_begin + 2); ++chunk) {
        prefetch_chunk(kv, kv_head, block_table, tile_window(tile, chunk));
    }
    ops.load_queries(tile, head_dim, scratch);
    if (partials == nullptr) std::fill_n(scratch.state_sum, n_rows, 0.0f);
    for (int32_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
        const auto n = static_cast<size_t>(n_rows);
        if (partials == nullptr) {
            ops.attend_chunk(tile, kv, kv_head, block_table, scale, chunk, scratch);
            ops.merge(n_rows, head_dim, scratch.o, scratch.max, scratch.sum, scratch);
            continue;
        }
        const auto index = static_cast<size_t>(chunk - chunk_begin);
        ops.attend_chunk(tile, kv, kv_head, block_table, scale, chunk, scratch);
        std::memcpy(partials->o + index * n * static_cast<size_t>(head_dim), scratch.o,
                    sizeof(float) * n * static_cast<size_t>(head_dim));
        std::memcpy(partials->max + index * n, scratch.max, sizeof(float) * n);
        std::memcpy(partials->sum + index * n, scratch.sum, sizeof(float) * n);
    }
    if (partials == nullptr) ops.finish(tile, head_dim, scratch);
}

void merge_with(const ChunkOps& ops, const AttentionTile& tile, int32_t head_dim,
                const ChunkPartials& partials, int32_t n_chunks, float* scratch_floats) {
    const int32_t n_rows = tile.n_rows();
    const ChunkScratch scratch = carve_chunk_scratch(scratch_floats, head_dim);
    std::fill_n(scratch.state_sum, n_rows, 0.0f);
    const auto n = static_cast<size_t>(n_rows);
    for (int32_t c = 0; c < n_chunks; ++c) {
        const auto index = static_cast<size_t>(c);
        ops.merge(n_rows, head_dim, partials.o + index * n * static_cast<size_t>(head_dim),
                  partials.max + index * n, partials.sum + index * n, scratch);
    }
    ops.finish(tile, head_dim, scratch);
}

// any_type_ops runs a layer that ops does not read (the BF16 path reads F16
// rows into its pairs and BF16 tiles as they are; the F32 paths dequantize
// any type). Both share one merge, so partials of either merge alike.
template <const ChunkOps& ops, const ChunkOps& any_type_ops>
void attend_path(const AttentionTile& tile, const PagedKvLayer& kv, int32_t kv_head,
                 const int32_t* block_table, float scale, int32_t chunk_begin, int32_t chunk_end,
                 const ChunkPartials* partials, float* scratch) {
    const bool reads = ops.reads == nullptr || ops.reads(kv);
    attend_with(reads ? ops : any_type_ops, tile, kv, kv_head, block_table, scale, chunk_begin,
                chunk_end, partials, scratch);
}

template <const ChunkOps& ops>
void merge_path(const AttentionTile& tile, int32_t head_dim, const ChunkPartials& partials,
                int32_t n_chunks, float* scratch) {
    merge_with(ops, tile, head_dim, partials, n_chunks, scratch);
}

const ChunkedAttentionKernels kScalar{"scalar", tensor::DType::F16,
                                      attend_path<kScalarChunkOps, kScalarChunkOps>,
                                      merge_path<kScalarChunkOps>};
const ChunkedAttentionKernels kAvx2{"avx2", tensor::DType::F16,
                                    attend_path<kAvx2ChunkOps, kAvx2ChunkOps>,
                                    merge_path<kAvx2ChunkOps>};
const ChunkedAttentionKernels kAvx512Bf16{"avx512-bf16", tensor::DType::BF16,
                                          attend_path<kAvx512Bf16ChunkOps, kAvx2ChunkOps>,
                                          merge_path<kAvx512Bf16ChunkOps>};

}  // namespace

}  // namespace detail

size_t chunked_attention_scratch_floats(int32_t head_dim) {
    const detail::ScratchSizes sizes = detail::scratch_sizes(head_dim);
    return sizes.queries + sizes.keys + sizes.values + sizes.scores + 2 * sizes.o +
           4 * sizes.row + detail::kAlignFloats;
}

const ChunkedAttentionKernels& chunked_attention_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    switch (isa) {
        case Isa::Scalar:
            return detail::kScalar;
        case Isa::Avx2:
            return detail::kAvx2;
        case Isa::Avx512:
            return cpu_features().avx512_bf16 ? detail::kAvx512Bf16 : detail::kAvx2;
    }
    return detail::kScalar;
}

const ChunkedAttentionKernels& chunked_attention() {
    // The same path as the matrix products, so LADDER_CPU=scalar runs the reference everywhere.
    static const ChunkedAttentionKernels& chosen = chunked_attention_for(cpu_kernels().isa);
    return chosen;
}

std::vector<const ChunkedAttentionKernels*> supported_chunked_attention() {
    std::vector<const ChunkedAttentionKernels*> out = {&detail::kScalar};
    if (isa_supported(Isa::Avx2, cpu_features())) out.push_back(&detail::kAvx2);
    if (isa_supported(Isa::Avx512, cpu_features()) && cpu_features().avx512_bf16) {
        out.push_back(&detail::kAvx512Bf16);
    }
    return out;
}

}  // namespace ladder::kernels::cpu
