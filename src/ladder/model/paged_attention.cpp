#include "ladder/model/paged_attention.h"

#include <algorithm>
#include <vector>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/hadamard.h"
#include "ladder/util/thread_pool.h"

namespace ladder::model {

kernels::cpu::PagedKvLayer paged_kv_layer(const KvCacheStorage& kv, int32_t layer) {
    const KvCacheShape& shape = kv.shape();
    return {kv.keys(layer, 0, 0), kv.values(layer, 0, 0), shape.n_kv_heads, shape.block_size,
            shape.head_dim,       shape.types.key,        shape.types.value};
}

int32_t key_rotation(const KvCacheShape& shape) {
    if (!tensor::dtype_traits(shape.types.key).is_quantized || shape.head_dim % 64 != 0) return 0;
    int32_t n = 64;
    while (shape.head_dim % (2 * n) == 0) n *= 2;
    return n;
}

int32_t value_rotation(const KvCacheShape& shape) {
    // llama.cpp found the smallest rotation best for V.
    return tensor::dtype_traits(shape.types.value).is_quantized && shape.head_dim % 64 == 0 ? 64
                                                                                            : 0;
}

void store_kv_row(const float* k, const float* v, int64_t slot, KvCacheStorage& kv, int32_t layer) {
    const KvCacheShape& shape = kv.shape();
    const int32_t key_n = key_rotation(shape);
    const int32_t value_n = value_rotation(shape);
    const int64_t row_values = int64_t{shape.n_kv_heads} * shape.head_dim;
    thread_local std::vector<float> rotated;
    if (key_n > 0 || value_n > 0) rotated.resize(static_cast<size_t>(2 * row_values));
    if (key_n > 0) {
        std::copy_n(k, row_values, rotated.data());
        kernels::cpu::rotate_hadamard(rotated.data(), row_values, key_n);
        k = rotated.data();
    }
    if (value_n > 0) {
        std::copy_n(v, row_values, rotated.data() + row_values);
        kernels::cpu::rotate_hadamard(rotated.data() + row_values, row_values, value_n);
        v = rotated.data() + row_values;
    }
    kernels::cpu::store_kv(k, v, slot, kv.keys(layer, 0, 0), kv.values(layer, 0, 0),
                           paged_kv_layer(kv, layer));
}

namespace {

// llama.cpp's order (kernels/cpu/attention.h): tasks of (token, head group).
void exact_paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                           const ModelConfig& config, float scale, int32_t window,
                           ForwardScratch& scratch, util::ThreadPool& pool) {
    const kernels::cpu::PagedKvLayer kv_layer = paged_kv_layer(kv, layer);
    if (split_attention_pays(batch, kv_layer, config, window, pool.n_threads())) {
        split_paged_attention(batch, kv, layer, config, scale, window, scratch, pool);
        return;
    }
    const int32_t group = config.n_heads / config.n_kv_heads;
    // Tasks are (token, head group) pairs of all sequences, grouped into one
    // contiguous range per chunk; each chunk has its own rows of score
    // scratch. A head group is the query heads sharing one KV head, which
    // read its rows once for all of them (~1.7x faster per head), unless that
    // leaves a thread without a task (one sequence decoding with fewer KV
    // heads than threads): then one head per task.
    const bool whole_groups =
        int64_t{batch.n_tokens()} * config.n_kv_heads >= int64_t{pool.n_threads()};
    const int32_t heads_per_task = whole_groups ? group : 1;
    const int32_t tasks_per_row = config.n_heads / heads_per_task;
    const int64_t n_pairs = int64_t{batch.n_tokens()} * tasks_per_row;
    if (n_pairs == 0) return;
    const int64_t n_chunks = std::min<int64_t>(n_pairs, int64_t{pool.n_threads()} * 4);
    const int64_t chunk = (n_pairs + n_chunks - 1) / n_chunks;
    int32_t longest = 0;
    for (const BatchSequence& sequence : batch.sequences) {
        longest = std::max(longest, sequence.n_context);
    }
    const auto scores_per_chunk =
        static_cast<size_t>(longest) * static_cast<size_t>(heads_per_task);
    if (scratch.scores.size() < scores_per_chunk * static_cast<size_t>(n_chunks)) {
        scratch.scores.resize(scores_per_chunk * static_cast<size_t>(n_chunks));
    }
    // Row -> its sequence, so a pair finds its block table.
    scratch.row_sequence.resize(static_cast<size_t>(batch.n_tokens()));
    for (size_t s = 0; s < batch.sequences.size(); ++s) {
        const BatchSequence& sequence = batch.sequences[s];
        for (int32_t i = 0; i < sequence.n_tokens; ++i) {
            scratch.row_sequence[static_cast<size_t>(sequence.first_row + i)] =
                static_cast<int32_t>(s);
        }
    }
    pool.parallel_for(n_chunks, [&](int64_t c) {
        float* scores = scratch.scores.data() + static_cast<size_t>(c) * scores_per_chunk;
        for (int64_t pair = c * chunk; pair < std::min(n_pairs, (c + 1) * chunk); ++pair) {
            const auto row = static_cast<int32_t>(pair / tasks_per_row);
            const auto first_head = static_cast<int32_t>(pair % tasks_per_row) * heads_per_task;
            const int32_t sequence_index = scratch.row_sequence[static_cast<size_t>(row)];
            const BatchSequence& sequence = batch.sequences[static_cast<size_t>(sequence_index)];
            const int64_t offset = static_cast<int64_t>(row) * config.q_dim() +
                                   static_cast<int64_t>(first_head) * config.head_dim;
            const int32_t position = batch.positions[static_cast<size_t>(row)];
            const int32_t first_visible = window > 0 ? std::max(0, position - window + 1) : 0;
            const int32_t* blocks = kv.in_window_group(layer) ? sequence.window_block_table.data()
                                                              : sequence.block_table.data();
            kernels::cpu::attend_heads(scratch.q.data() + offset, heads_per_task, blocks,
                                       first_visible, position + 1, kv_layer, first_head / group,
                                       scale, scores, scratch.attn.data() + offset);
        }
    });
}

}  // namespace

void paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                     const ModelConfig& config, float scale, int32_t window, AttentionPath path,
                     ForwardScratch& scratch, util::ThreadPool& pool) {
    const int64_t n_values = int64_t{batch.n_tokens()} * config.q_dim();
    if (const int32_t n = key_rotation(kv.shape()); n > 0) {
        kernels::cpu::rotate_hadamard(scratch.q.data(), n_values, n);
    }
    if (path == AttentionPath::Fast && config.head_dim % 32 == 0) {
        chunked_paged_attention(batch, kv, layer, config, scale, window, scratch, pool);
    } else {
        exact_paged_attention(batch, kv, layer, config, scale, window, scratch, pool);
    }
    if (const int32_t n = value_rotation(kv.shape()); n > 0) {
        kernels::cpu::rotate_hadamard(scratch.attn.data(), n_values, n);
    }
}

}  // namespace ladder::model
