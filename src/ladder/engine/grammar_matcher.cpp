#include "ladder/engine/grammar_matcher.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "ladder/util/check.h"

namespace ladder::engine {

void apply_token_bitmask(std::span<const int32_t> bitmask, std::span<float> logits) {
    constexpr float kMasked = -std::numeric_limits<float>::infinity();
    const size_t n = logits.size();
    for (size_t word = 0; word < bitmask.size(); ++word) {
        const auto bits = static_cast<uint32_t>(bitmask[word]);
        if (bits == ~uint32_t{0}) continue;  // the common case inside free text
        const size_t first = word * 32;
        const size_t end = std::min(first + 32, n);
        if (bits == 0) {
            std::fill(logits.begin() + static_cast<std::ptrdiff_t>(first),
                      logits.begin() + static_cast<std::ptrdiff_t>(end), kMasked);
            continue;
        }
        for (size_t i = first; i < end; ++i) {
            if (((bits >> (i - first)) & 1u) == 0) logits[i] = kMasked;
        }
    }
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar,
                                     std::string gate)
    : grammar_(std::move(grammar)),
      matcher_(grammar_->grammar()),
      bitmask_(static_cast<size_t>(xgrammar::GetBitmaskSize(grammar_->vocab_size()))),
      gate_(std::move(gate)),
      gate_open_(gate_.empty()) {}

void GrammarConstraint::apply_mask(std::span<float> logits) {
    if (!gate_open_) return;
    LADDER_CHECK(logits.size() == static_cast<size_t>(grammar_->vocab_size()),
                 "logits and grammar disagree on the vocabulary size");
    int64_t shape[1] = {static_cast<int64_t>(bitmask_.size())};
    DLTensor tensor{};
    tensor.data = bitmask_.data();
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = 1;
    tensor.dtype = xgrammar::GetBitmaskDLType();
    tensor.shape = shape;
    // False: every token is allowed here, nothing to mask.
    if (matcher_.FillNextTokenBitmask(&tensor)) apply_token_bitmask(bitmask_, logits);
}

bool GrammarConstraint::accept(TokenId token) {
    if (!gate_open_) return accept_before_gate(token);
    if (!matcher_.AcceptToken(token)) return false;
    ++n_matcher_tokens_;
    return true;
}

bool GrammarConstraint::accept_before_gate(TokenId token) {
    if (token < 0 || token >= grammar_->vocab_size()) return false;
    const std::vector<std::string>& pieces =
        grammar_->grammar().GetTokenizerInfo().GetDecodedVocab();
    // Ids past the vocabulary's own (padding) have no piece.
    const std::string_view piece =
        static_cast<size_t>(token) < pieces.size() ? pieces[static_cast<size_t>(token)] : "";
    const size_t before = before_gate_.size();
    before_gate_ += piece;
    piece_ends_.push_back(before_gate_.size());
    // Only this token's text, with what came just before it, can complete the gate.
    const size_t at = before_gate_.find(gate_, before - std::min(before, gate_.size()));
    if (at == std::string::npos) return true;
    gate_open_ = true;
    n_matcher_tokens_ = 0;
    const std::string after = before_gate_.substr(at + gate_.size());
    opened_with_text_ = !after.empty();
    // Text after the gate in the same token must already fit the grammar.
    if (opened_with_text_ && !matcher_.AcceptString(after)) {
        gate_open_ = false;
        opened_with_text_ = false;
        before_gate_.resize(before);
        piece_ends_.pop_back();
        return false;
    }
    return true;
}

void GrammarConstraint::rollback(int32_t n) {
    for (; n > 0; --n) {
        if (gate_open_ && n_matcher_tokens_ > 0) {
            matcher_.Rollback(1);
            --n_matcher_tokens_;
            continue;
        }
        if (gate_open_) {
            // Back before the token that opened the gate.
            if (gate_.empty()) return;
            if (opened_with_text_) matcher_.Rollback(1);
            gate_open_ = false;
            opened_with_text_ = false;
        }
        if (piece_ends_.empty()) return;
        piece_ends_.pop_back();
        before_gate_.resize(piece_ends_.empty() ? 0 : piece_ends_.back());
    }
}

bool GrammarConstraint::is_terminated() const { return gate_open_ && matcher_.IsTerminated(); }

}  // namespace ladder::engine
