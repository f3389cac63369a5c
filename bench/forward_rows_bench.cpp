// What one forward step of a real model costs at T rows of one sequence, each
// row with its logits: a decode step verifying T - 1 drafted tokens
// (speculative decoding pays off only while T rows cost little more than one).
// The row counts run round-robin, repeatedly, so a noisy neighbour slows them
// all alike; the minimum and the median of each are printed.
//   forward_rows_bench MODEL.gguf [threads=2] [context=512] [max_rows=8] [rounds=30]
//                      [attention=exact|fast] [logits=every|last]
// (fast runs on the KV cache type `--kv-cache-dtype auto` gives it.) With
// `last`, only the last row has logits, as a prompt chunk's: the two runs'
// difference at T rows is what T - 1 rows of the output matrix cost, the
// per-logit-row price of a `ladder simulate` profile.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "ladder/engine/model_bundle.h"
#include "ladder/model/attention_path.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"

namespace {

using namespace ladder;

// Rows [first, first + n) of one sequence whose KV blocks are 0, 1, 2, ...
model::Batch batch_of(int32_t first, int32_t n, int32_t block_size,
                      const std::vector<int32_t>& blocks, bool every_logit) {
    model::Batch batch;
    for (int32_t position = first; position < first + n; ++position) {
        batch.tokens.push_back(1000 + position % 7000);
        batch.positions.push_back(position);
        batch.slots.push_back(position);  // block b holds positions b * block_size..
        if (every_logit || position == first + n - 1) batch.logit_rows.push_back(position - first);
    }
    const auto n_blocks = static_cast<size_t>((first + n + block_size - 1) / block_size);
    batch.sequences.push_back(
        {0, n, first + n, std::span<const int32_t>(blocks.data(), n_blocks), {}});
    return batch;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: %s MODEL.gguf [threads] [context] [max_rows] [rounds] "
                     "[exact|fast] [every|last]\n",
                     argv[0]);
        return 2;
    }
    try {
        const int n_threads = argc > 2 ? std::atoi(argv[2]) : 2;
        const int32_t context = argc > 3 ? std::atoi(argv[3]) : 512;
        const int32_t max_rows = argc > 4 ? std::atoi(argv[4]) : 8;
        const int rounds = argc > 5 ? std::atoi(argv[5]) : 30;
        const std::string attention = argc > 6 ? argv[6] : "exact";
        const std::string logit_rows = argc > 7 ? argv[7] : "every";
        if (logit_rows != "every" && logit_rows != "last") {
            throw std::runtime_error("logits must be every or last, not " + logit_rows);
        }
        const bool every_logit = logit_rows == "every";
        if (attention != "exact" && attention != "fast") {
            throw std::runtime_error("attention must be exact or fast, not " + attention);
        }
        const engine::ModelBundle bundle = engine::load_model_bundle(argv[1]);
        model::Model& model = *bundle.model;
        constexpr int32_t kBlockSize = 16;
        if (attention == "fast") {
            model.set_attention_path(model::AttentionPath::Fast);
            const tensor::DType kv_type = model::auto_kv_cache_type(model::AttentionPath::Fast);
            model.set_kv_cache_types({kv_type, kv_type});
        }
        const int32_t n_blocks = (context + max_rows) / kBlockSize + 1;
        model::KvCacheStorage kv(model.kv_cache_shape(n_blocks, kBlockSize));
        std::vector<int32_t> blocks(static_cast<size_t>(n_blocks));
        for (int32_t b = 0; b < n_blocks; ++b) blocks[static_cast<size_t>(b)] = b;
        util::ThreadPool pool(n_threads);
        const auto vocab = static_cast<size_t>(model.config().vocab_size);
        std::vector<float> logits(vocab * static_cast<size_t>(max_rows));

        // The context, prefilled in chunks.
        for (int32_t first = 0; first < context; first += 256) {
            const model::Batch chunk =
                batch_of(first, std::min(256, context - first), kBlockSize, blocks, false);
            model.forward(chunk, kv, pool, logits);
        }
        std::vector<std::vector<double>> seconds(static_cast<size_t>(max_rows));
        for (int round = 0; round < rounds; ++round) {
            for (int32_t n = 1; n <= max_rows; ++n) {
                // Every step rewrites the same positions after the context.
                const model::Batch step = batch_of(context, n, kBlockSize, blocks, every_logit);
                const double start = util::now_seconds();
                model.forward(step, kv, pool, logits);
                seconds[static_cast<size_t>(n - 1)].push_back(util::now_seconds() - start);
            }
        }
        const double one = median(seconds[0]);
        std::printf("rows  min ms  median ms  median vs 1 row\n");
        for (int32_t n = 1; n <= max_rows; ++n) {
            const std::vector<double>& s = seconds[static_cast<size_t>(n - 1)];
            std::printf("%4d  %6.2f  %9.2f  %15.2f\n", n,
                        1e3 * *std::min_element(s.begin(), s.end()), 1e3 * median(s),
                        median(s) / one);
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "forward_rows_bench: %s\n", error.what());
        return 1;
    }
    return 0;
}
