// What a restriction on the next token (a grammar) looks like to the engine;
// what the restriction is (a JSON schema, a regex) is not the engine's business.
#pragma once

#include <cstdint>
#include <span>

#include "ladder/tokenizer/vocabulary.h"

namespace ladder::engine {

using TokenId = tokenizer::TokenId;

// A per-sequence restriction on which tokens may come next (a grammar matcher).
// The engine applies it at every sampled position, speculative ones included.
class TokenConstraint {
public:
    virtual ~TokenConstraint() = default;
    // Sets to -infinity the logits of every token not allowed in the current state
    // (EOS is allowed only where the grammar may end).
    virtual void apply_mask(std::span<float> logits) = 0;
    // Advances the state by one token. Returns false (state unchanged) if it is not allowed.
    virtual bool accept(TokenId token) = 0;
    // Undoes the last n accepted tokens.
    virtual void rollback(int32_t n) = 0;
    // The grammar has ended: nothing more may be generated (the request finishes with stop).
    virtual bool is_terminated() const = 0;
};

}  // namespace ladder::engine
