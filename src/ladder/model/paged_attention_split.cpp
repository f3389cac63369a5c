// The exact attention of a step with fewer (token, KV head) pairs than
// threads (one sequence decoding: Gemma 3's one KV head on 2 threads), where
// the exact path would run one task per query head and each would read the
// head's K and V again. Here every thread works on one read of them: the
// scores and the exps of each pair in pieces of positions, the weighted
// values in pieces of dimensions, one parallel region per step
// (kernels/cpu/attention.h, SplitAttentionKernels). The pieces give
// attend_heads' bits, so how the work is cut never shows. With pairs enough
// for the threads (SmolLM2's 3 KV heads on 2 threads) the whole head groups
// were faster: the three regions and the scores' round trip through memory
// cost more than the idle thread they save.
#include <algorithm>
#include <limits>

#include "ladder/kernels/cpu/attention.h"
#include "ladder/model/paged_attention.h"
#include "ladder/util/thread_pool.h"

namespace ladder::model {

namespace {

namespace cpu = kernels::cpu;

// Below this many visible positions three parallel regions cost more than
// the repeated reads they save.
constexpr int32_t kMinSplitPositions = 512;
// Pieces of positions per thread: enough that the threads finish together.
constexpr int64_t kSplitPiecesPerThread = 4;

using SplitPair = ForwardScratch::SplitAttentionPair;
using SplitPiece = ForwardScratch::SplitAttentionPiece;

void plan_split_pairs(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                      const ModelConfig& config, int32_t window, ForwardScratch& scratch) {
    const int32_t group = config.n_heads / config.n_kv_heads;
    scratch.split_pairs.clear();
    int64_t scores = 0;
    int64_t sums = 0;
    for (const BatchSequence& sequence : batch.sequences) {
        const int32_t* blocks = kv.in_window_group(layer) ? sequence.window_block_table.data()
                                                          : sequence.block_table.data();
        for (int32_t i = 0; i < sequence.n_tokens; ++i) {
            const int32_t row = sequence.first_row + i;
            const int32_t position = batch.positions[static_cast<size_t>(row)];
            const int32_t first_visible = window > 0 ? std::max(0, position - window + 1) : 0;
            for (int32_t kv_head = 0; kv_head < config.n_kv_heads; ++kv_head) {
                scratch.split_pairs.push_back(
                    {row, kv_head, first_visible, position + 1, blocks, scores, sums});
                scores += int64_t{group} * (position + 1 - first_visible);
                sums += int64_t{group} * cpu::softmax_group_count(first_visible, position + 1);
            }
        }
    }
    scratch.split_scores.resize(static_cast<size_t>(scores));
    scratch.split_group_sums.resize(static_cast<size_t>(sums));
}

// Each pair's positions in pieces of about the same length, cut at multiples
// of 8 (the softmax's groups), and each pair's dimensions in multiples of 16.
void plan_split_pieces(const ModelConfig& config, int n_threads, ForwardScratch& scratch) {
    int64_t total = 0;
    for (const SplitPair& pair : scratch.split_pairs) total += pair.n_visible - pair.first_visible;
    const int64_t target = int64_t{n_threads} * kSplitPiecesPerThread;
    const auto length =
        static_cast<int32_t>(std::max<int64_t>(64, (total + target - 1) / target + 7) / 8 * 8);
    scratch.split_position_pieces.clear();
    for (int32_t p = 0; p < static_cast<int32_t>(scratch.split_pairs.size()); ++p) {
        const SplitPair& pair = scratch.split_pairs[static_cast<size_t>(p)];
        for (int32_t begin = pair.first_visible; begin < pair.n_visible;) {
            const int32_t end = std::min(pair.n_visible, (begin / 8 * 8) + length);
            scratch.split_position_pieces.push_back({p, {begin, end}});
            begin = end;
        }
    }
    const auto n_pairs = static_cast<int64_t>(scratch.split_pairs.size());
    const int32_t max_pieces = config.head_dim / 16;
    const auto n_dim_pieces = static_cast<int32_t>(
        std::clamp<int64_t>((2 * n_threads + n_pairs - 1) / n_pairs, 1, max_pieces));
    scratch.split_dim_pieces.clear();
    for (int32_t p = 0; p < static_cast<int32_t>(n_pairs); ++p) {
        for (int32_t i = 0; i < n_dim_pieces; ++i) {
            const int32_t begin = max_pieces * i / n_dim_pieces * 16;
            const int32_t end = max_pieces * (i + 1) / n_dim_pieces * 16;
            scratch.split_dim_pieces.push_back({p, {begin, end}});
        }
    }
}

}  // namespace

bool split_attention_pays(const Batch& batch, const cpu::PagedKvLayer& kv,
                          const ModelConfig& config, int32_t window, int n_threads) {
    if (n_threads < 2 || !kv.is_f16() || config.head_dim % 16 != 0 ||
        cpu::split_attention() == nullptr) {
        return false;
    }
    if (int64_t{batch.n_tokens()} * config.n_kv_heads >= int64_t{n_threads}) return false;
    int32_t longest = 0;
    for (const BatchSequence& sequence : batch.sequences) {
        longest = std::max(longest,
                           window > 0 ? std::min(window, sequence.n_context) : sequence.n_context);
    }
    return longest >= kMinSplitPositions;
}

void split_paged_attention(const Batch& batch, const KvCacheStorage& kv, int32_t layer,
                           const ModelConfig& config, float scale, int32_t window,
                           ForwardScratch& scratch, util::ThreadPool& pool) {
    const cpu::SplitAttentionKernels& kernels = *cpu::split_attention();
    const cpu::PagedKvLayer kv_layer = paged_kv_layer(kv, layer);
    const int32_t group = config.n_heads / config.n_kv_heads;
    plan_split_pairs(batch, kv, layer, config, window, scratch);
    plan_split_pieces(config, pool.n_threads(), scratch);
    const auto heads_offset = [&](const SplitPair& pair) {
        return int64_t{pair.row} * config.q_dim() + int64_t{pair.kv_head} * group * config.head_dim;
    };
    const auto& positions = scratch.split_position_pieces;
    // Every piece writes its own maxima: nothing to clear.
    scratch.split_max.resize(positions.size() * static_cast<size_t>(group));
    pool.parallel_for(static_cast<int64_t>(positions.size()), [&](int64_t i) {
        const SplitPiece& piece = positions[static_cast<size_t>(i)];
        const SplitPair& pair = scratch.split_pairs[static_cast<size_t>(piece.pair)];
        kernels.score(scratch.q.data() + heads_offset(pair), group, pair.block_table,
                      pair.first_visible, pair.n_visible, piece.range, kv_layer, pair.kv_head,
                      scale, scratch.split_scores.data() + pair.scores_offset,
                      scratch.split_max.data() + i * group);
    });
    // Each pair's maximum over its pieces, in the max the kernels take (NaN ignored).
    scratch.split_pair_max.assign(scratch.split_pairs.size() * static_cast<size_t>(group),
                                  -std::numeric_limits<float>::infinity());
    for (size_t i = 0; i < positions.size(); ++i) {
        float* best = scratch.split_pair_max.data() + positions[i].pair * group;
        const float* piece_max = scratch.split_max.data() + i * static_cast<size_t>(group);
        for (int32_t h = 0; h < group; ++h)
            best[h] = best[h] < piece_max[h] ? piece_max[h] : best[h];
    }
    pool.parallel_for(static_cast<int64_t>(positions.size()), [&](int64_t i) {
        const SplitPiece& piece = positions[static_cast<size_t>(i)];
        const SplitPair& pair = scratch.split_pairs[static_cast<size_t>(piece.pair)];
        kernels.exponentiate(scratch.split_scores.data() + pair.scores_offset, group,
                             pair.first_visible, pair.n_visible, piece.range,
                             scratch.split_pair_max.data() + piece.pair * group,
                             scratch.split_group_sums.data() + pair.sums_offset);
    });
    // Every dimension piece normalises its pair's exps into its own rows.
    const auto& dims = scratch.split_dim_pieces;
    int64_t probability_floats = 0;
    scratch.split_probability_offsets.resize(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
        const SplitPair& pair = scratch.split_pairs[static_cast<size_t>(dims[i].pair)];
        scratch.split_probability_offsets[i] = probability_floats;
        probability_floats += int64_t{group} * (pair.n_visible - pair.first_visible);
    }
    if (scratch.split_probabilities.size() < static_cast<size_t>(probability_floats)) {
        scratch.split_probabilities.resize(static_cast<size_t>(probability_floats));
    }
    pool.parallel_for(static_cast<int64_t>(dims.size()), [&](int64_t i) {
        const SplitPiece& piece = dims[static_cast<size_t>(i)];
        const SplitPair& pair = scratch.split_pairs[static_cast<size_t>(piece.pair)];
        kernels.weigh(scratch.split_scores.data() + pair.scores_offset, group,
                      scratch.split_group_sums.data() + pair.sums_offset, pair.block_table,
                      pair.first_visible, pair.n_visible, kv_layer, pair.kv_head, piece.range,
                      scratch.split_probabilities.data() +
                          scratch.split_probability_offsets[static_cast<size_t>(i)],
                      scratch.attn.data() + heads_offset(pair));
    });
}

}  // namespace ladder::model
