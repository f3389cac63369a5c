// The xgrammar side of structured output, shared by the compiler and the
// constraint: a compiled grammar, and the TokenConstraint that walks it.
// Only grammar files include this (it pulls in xgrammar's headers).
#pragma once

#include <xgrammar/xgrammar.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ladder/engine/token_constraint.h"

namespace ladder::engine {

class CompiledGrammar {
public:
    CompiledGrammar(xgrammar::CompiledGrammar grammar, int32_t vocab_size)
        : grammar_(std::move(grammar)), vocab_size_(vocab_size) {}

    const xgrammar::CompiledGrammar& grammar() const { return grammar_; }
    int32_t vocab_size() const { return vocab_size_; }

private:
    xgrammar::CompiledGrammar grammar_;
    int32_t vocab_size_;
};

// One sequence's position in a grammar. The mask is a bitmask with one bit
// per token (xgrammar's layout: bit i of word i / 32), filled fresh for every
// sampled position.
//
// With a gate (a reasoning model's "</think>"), the output is free until the
// gate's text has been written; the grammar holds what follows it (text of
// the token that completed the gate included).
class GrammarConstraint final : public TokenConstraint {
public:
    GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar, std::string gate);

    void apply_mask(std::span<float> logits) override;
    bool accept(TokenId token) override;
    void rollback(int32_t n) override;
    bool is_terminated() const override;

private:
    bool accept_before_gate(TokenId token);

    std::shared_ptr<const CompiledGrammar> grammar_;
    xgrammar::GrammarMatcher matcher_;
    std::vector<int32_t> bitmask_;  // [ceil(vocab_size / 32)]
    std::string gate_;              // empty: the grammar holds from the first token
    bool gate_open_ = true;
    std::string before_gate_;         // the output's text while the gate was closed
    std::vector<size_t> piece_ends_;  // per token before the gate: before_gate_'s size after it
    bool opened_with_text_ = false;   // the matcher's first step was text after the gate
    int32_t n_matcher_tokens_ = 0;    // tokens accepted since the gate opened
};

// Sets to -infinity every logit whose bit in bitmask is clear.
void apply_token_bitmask(std::span<const int32_t> bitmask, std::span<float> logits);

}  // namespace ladder::engine
