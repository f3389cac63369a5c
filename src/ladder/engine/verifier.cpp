#include "ladder/engine/verifier.h"

#include <algorithm>

#include "ladder/engine/position_sampling.h"
#include "ladder/util/check.h"

namespace ladder::engine {

namespace {

// q(x) of a distribution sorted by id.
double probability_of(std::span<const TokenProbability> sorted_by_id, TokenId id) {
    const auto it = std::lower_bound(
        sorted_by_id.begin(), sorted_by_id.end(), id,
        [](const TokenProbability& t, TokenId value) { return t.id < value; });
    return it != sorted_by_id.end() && it->id == id ? it->probability : 0.0;
}

// Rejection sampling at one drafted position: the draft itself, or a draw
// from the residual norm(max(0, p - q)).
TokenId accept_or_resample(Sequence& sequence, std::span<float> row, TokenId draft,
                           std::span<const TokenProbability> q) {
    const int64_t position = sequence.n_tokens();
    const std::span<const TokenProbability> p = next_token_distribution(sequence, row);
    double p_draft = 0.0;
    for (const TokenProbability& t : p) {
        if (t.id == draft) p_draft = t.probability;
    }
    const double q_draft = probability_of(q, draft);
    // u < p/q, without dividing: accepts every draft with p >= q.
    if (q_draft > 0.0 &&
        sequence.sampler.uniform(position, DrawPurpose::DraftAcceptance) * q_draft < p_draft) {
        return draft;
    }
    std::vector<TokenProbability>& residual = sequence.residual_scratch;
    residual.clear();
    for (const TokenProbability& t : p) {
        const double excess = t.probability - probability_of(q, t.id);
        if (excess > 0.0) residual.push_back({t.id, excess});
    }
    // p == q up to rounding leaves no excess: p itself is then the residual.
    const std::span<const TokenProbability> from =
        residual.empty() ? p : std::span<const TokenProbability>(residual);
    return draw_from(from, sequence.sampler.uniform(position, DrawPurpose::Residual));
}

}  // namespace

void verify_step(Sequence& sequence, std::span<float> logits, size_t vocab_size) {
    const DraftProposal& draft = sequence.draft;
    const auto n_rows = static_cast<size_t>(draft.size()) + 1;
    LADDER_CHECK(logits.size() >= n_rows * vocab_size, "fewer logit rows than drafts + 1");
    const bool rejection_sampling =
        !draft.distributions.empty() && sequence.sampler.params().temperature > 0.0f;
    const bool want_logprobs = sequence.params.logprobs.has_value();
    sequence.new_tokens.clear();
    sequence.new_logprobs.clear();
    sequence.n_accepted_drafts = 0;
    sequence.constraint_refused = false;
    const size_t n_before = sequence.tokens.size();

    for (size_t i = 0; i < n_rows; ++i) {
        std::span<float> row = logits.subspan(i * vocab_size, vocab_size);
        // Log-probabilities are the model's own, before the constraint, bias
        // and penalties, which change row in place: they read a copy.
        if (want_logprobs) sequence.raw_logits.assign(row.begin(), row.end());
        const bool drafted = i < static_cast<size_t>(draft.size());
        const TokenId token =
            drafted && rejection_sampling
                ? accept_or_resample(sequence, row, draft.tokens[i], draft.distributions[i])
                : sample_next_token(sequence, row);
        if (sequence.constraint && !sequence.constraint->accept(token)) {
            sequence.constraint_refused = true;
            break;
        }
        sequence.new_tokens.push_back(token);
        if (want_logprobs) {
            sequence.new_logprobs.push_back(
                {token, logprob_of(sequence.raw_logits, token),
                 top_logprobs(sequence.raw_logits, *sequence.params.logprobs)});
        }
        if (!drafted || token != draft.tokens[i]) break;
        ++sequence.n_accepted_drafts;
        if (sequence.constraint && sequence.constraint->is_terminated()) break;
        // The next position's history and index include the accepted draft.
        sequence.tokens.push_back(token);
    }
    sequence.tokens.resize(n_before);
}

}  // namespace ladder::engine
