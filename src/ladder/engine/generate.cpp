#include "ladder/engine/generate.h"

#include <vector>

#include "ladder/util/error.h"
#include "ladder/util/timer.h"

namespace ladder::engine {

GenerationStats generate(Session& session, Sampler& sampler, const tokenizer::Tokenizer& tokenizer,
                         const GenerationRequest& request) {
    GenerationStats stats;
    stats.n_prompt_tokens = static_cast<int32_t>(request.prompt.size());
    const double start = util::now_seconds();
    std::span<const float> logits = session.append(request.prompt);
    stats.prompt_seconds = util::now_seconds() - start;

    tokenizer::StreamingDetokenizer detokenizer(tokenizer);
    std::vector<float> working;  // the sampler penalizes in place; the session's logits stay intact
    double first_token_time = 0.0;
    stats.finish_reason = FinishReason::Length;
    for (int32_t i = 0; i < request.max_new_tokens; ++i) {
        working.assign(logits.begin(), logits.end());
        const int32_t token = sampler.sample(working, session.tokens(), session.n_tokens());
        if (i == 0) {
            first_token_time = util::now_seconds();
            stats.time_to_first_token = first_token_time - start;
        }
        ++stats.n_generated_tokens;
        const bool room_left = session.n_tokens() < session.max_context();
        if (tokenizer.is_end_of_generation(token)) {
            stats.finish_reason = FinishReason::Stop;
            if (room_left) session.add_pending(token);
            break;
        }
        if (request.on_text) {
            const std::string text = detokenizer.push(token);
            if (!text.empty()) request.on_text(text);
        }
        const bool interrupted = request.interrupt != nullptr && request.interrupt->load();
        if (interrupted) stats.finish_reason = FinishReason::Abort;
        // The last token of the reply is kept uncomputed: the next append
        // (a chat's next turn) computes it together with what follows.
        if (interrupted || i + 1 == request.max_new_tokens || !room_left) {
            if (room_left) session.add_pending(token);
            break;
        }
        logits = session.append({&token, 1});
    }
    if (request.on_text) {
        const std::string rest = detokenizer.flush();
        if (!rest.empty()) request.on_text(rest);
    }
    if (stats.n_generated_tokens > 0) stats.generation_seconds = util::now_seconds() - first_token_time;
    return stats;
}

}  // namespace ladder::engine
