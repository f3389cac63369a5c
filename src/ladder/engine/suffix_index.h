// A suffix index over earlier requests' tokens, shared by all requests (the
// global tree of Suffix Decoding, Oliaro et al., arXiv 2411.04975): every
// substring of at most max_depth tokens of every stored sequence is a path
// from the root, each node counting how often its substring occurred. Given
// a sequence's recent tokens, it finds the longest stored substring they end
// with and proposes the most frequent continuation. Bounded: past
// max_sequences stored sequences or max_nodes nodes the oldest are forgotten.
// Agent loops and repeated edits are what it is for: each round's output
// repeats much of the round before.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "ladder/tokenizer/vocabulary.h"

namespace ladder::engine {

using TokenId = tokenizer::TokenId;

struct SuffixProposal {
    std::vector<TokenId> tokens;
    int32_t n_matched = 0;  // length of the matched suffix of the context
    // Expected tokens accepted: the sum over the proposal of the product of
    // its tokens' frequencies along the path (each given the one before).
    double score = 0.0;
};

class SuffixIndex {
public:
    SuffixIndex(int32_t max_depth, int32_t max_sequences, int64_t max_nodes);

    // Stores a sequence (a finished request's prompt and output). The oldest
    // are forgotten while either bound is passed; a sequence alone larger
    // than the node bound is stored as far as it fits.
    void insert(std::span<const TokenId> tokens);
    // Forgets the oldest stored sequence (a caller that bounds several
    // indexes together picks which); nothing when none is stored.
    void forget_oldest();

    // The continuation of context's longest suffix found in the index that
    // has one: each next token the most frequent child, while the product of
    // their frequencies (each given the path before it) stays at least
    // min_probability; at most max_tokens, at most max_spec_factor x the
    // match length, and the match plus the proposal at most max_depth.
    SuffixProposal propose(std::span<const TokenId> context, int32_t max_tokens,
                           double max_spec_factor, double min_probability) const;

    int32_t n_sequences() const { return static_cast<int32_t>(sequences_.size()); }
    int64_t n_nodes() const { return n_live_nodes_; }
    int32_t max_depth() const { return max_depth_; }

private:
    static constexpr int32_t kNone = -1;
    struct Node {
        TokenId token = 0;
        int32_t count = 0;
        int32_t parent = kNone;
        int32_t first_child = kNone;
        int32_t next_sibling = kNone;
        int32_t prev_sibling = kNone;
    };
    static uint64_t edge_key(int32_t parent, TokenId token) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) |
               static_cast<uint32_t>(token);
    }
    int32_t child(int32_t parent, TokenId token) const;
    int32_t add_child(int32_t parent, TokenId token);
    void remove_node(int32_t node);
    // Adds (+1) or removes (-1) one occurrence of every substring of tokens.
    void count_substrings(std::span<const TokenId> tokens, int32_t delta);
    // The node whose path is context's last n tokens, or kNone.
    int32_t find(std::span<const TokenId> context, int32_t n) const;
    SuffixProposal follow(int32_t node, int32_t n_matched, int32_t max_tokens,
                          double min_probability) const;

    int32_t max_depth_;
    int32_t max_sequences_;
    int64_t max_nodes_;
    std::vector<Node> nodes_;  // [0] is the root
    std::vector<int32_t> free_nodes_;
    int64_t n_live_nodes_ = 0;
    std::unordered_map<uint64_t, int32_t> edges_;  // (parent, token) -> child
    std::deque<std::vector<TokenId>> sequences_;   // oldest first, kept for forgetting
};

}  // namespace ladder::engine
