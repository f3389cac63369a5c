#include "ladder/engine/batch_runner.h"

#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::engine {

std::vector<BatchResult> run_batch(EngineCore& core, std::vector<RequestParams> requests,
                                   const BatchProgress& progress, KvPeak* kv_peak) {
    LADDER_CHECK(!core.has_work(), "run_batch numbers requests from 0: it needs an idle engine");
    for (size_t i = 0; i < requests.size(); ++i) {
        try {
            core.validate(requests[i]);
        } catch (const util::InputError& error) {
            util::fail("request {}: {}", i, error.what());
        }
    }
    std::vector<BatchResult> results(requests.size());
    int64_t n_finished = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        BatchResult& result = results[i];
        auto sink = [&result, &n_finished](RequestOutput&& output) {
            result.token_ids.insert(result.token_ids.end(), output.token_ids.begin(),
                                    output.token_ids.end());
            result.text += output.text;
            for (TokenLogprob& logprob : output.logprobs)
                result.logprobs.push_back(std::move(logprob));
            if (!output.token_ids.empty()) result.last_token_time = output.time;
            result.n_prompt_tokens = output.n_prompt_tokens;
            result.n_cached_prompt_tokens = output.n_cached_prompt_tokens;
            result.n_preemptions = output.n_preemptions;
            result.timings = output.timings;
            if (output.finish_reason) {
                result.finish_reason = *output.finish_reason;
                result.error = std::move(output.error);
                ++n_finished;
            }
        };
        core.add_request(RequestId{i}, std::move(requests[i]), std::move(sink));
    }
    while (core.has_work()) {
        core.step();
        const EngineStats& stats = core.stats();
        if (kv_peak != nullptr && stats.n_blocks_used > kv_peak->n_blocks_used) {
            *kv_peak = {stats.n_blocks_used,
                        static_cast<int64_t>(stats.n_blocks_used) * core.kv_plan().block_size,
                        stats.n_kv_tokens};
        }
        if (progress) progress(n_finished, static_cast<int64_t>(results.size()));
    }
    return results;
}

}  // namespace ladder::engine
