#include "ladder/engine/suffix_index.h"

#include <algorithm>
#include <cmath>

#include "ladder/util/check.h"

namespace ladder::engine {

SuffixIndex::SuffixIndex(int32_t max_depth, int32_t max_sequences, int64_t max_nodes)
    : max_depth_(max_depth), max_sequences_(max_sequences), max_nodes_(max_nodes) {
    LADDER_CHECK(max_depth > 0 && max_nodes > max_depth, "a suffix index needs depth and room");
    nodes_.emplace_back();  // the root
}

int32_t SuffixIndex::child(int32_t parent, TokenId token) const {
    const auto it = edges_.find(edge_key(parent, token));
    return it == edges_.end() ? kNone : it->second;
}

int32_t SuffixIndex::add_child(int32_t parent, TokenId token) {
    int32_t node = kNone;
    if (!free_nodes_.empty()) {
        node = free_nodes_.back();
        free_nodes_.pop_back();
        nodes_[static_cast<size_t>(node)] = Node{};
    } else {
        node = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
    }
    Node& n = nodes_[static_cast<size_t>(node)];
    Node& p = nodes_[static_cast<size_t>(parent)];
    n.token = token;
    n.parent = parent;
    n.next_sibling = p.first_child;
    if (p.first_child != kNone) nodes_[static_cast<size_t>(p.first_child)].prev_sibling = node;
    p.first_child = node;
    edges_.emplace(edge_key(parent, token), node);
    ++n_live_nodes_;
    return node;
}

void SuffixIndex::remove_node(int32_t node) {
    Node& n = nodes_[static_cast<size_t>(node)];
    LADDER_CHECK(n.count == 0 && n.first_child == kNone, "removing a suffix node still in use");
    Node& parent = nodes_[static_cast<size_t>(n.parent)];
    if (n.prev_sibling != kNone) {
        nodes_[static_cast<size_t>(n.prev_sibling)].next_sibling = n.next_sibling;
    } else {
        parent.first_child = n.next_sibling;
    }
    if (n.next_sibling != kNone)
        nodes_[static_cast<size_t>(n.next_sibling)].prev_sibling = n.prev_sibling;
    edges_.erase(edge_key(n.parent, n.token));
    free_nodes_.push_back(node);
    --n_live_nodes_;
}

void SuffixIndex::count_substrings(std::span<const TokenId> tokens, int32_t delta) {
    std::vector<int32_t> path;
    for (size_t start = 0; start < tokens.size(); ++start) {
        const size_t end = std::min(tokens.size(), start + static_cast<size_t>(max_depth_));
        int32_t node = 0;
        path.clear();
        for (size_t i = start; i < end; ++i) {
            int32_t next = child(node, tokens[i]);
            if (next == kNone) {
                LADDER_CHECK(delta > 0, "forgetting a substring the index does not hold");
                next = add_child(node, tokens[i]);
            }
            nodes_[static_cast<size_t>(next)].count += delta;
            path.push_back(next);
            node = next;
        }
        // A count is never above its parent's, so the nodes that reached 0
        // are the end of the path (and have no other children): deepest first.
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
            if (nodes_[static_cast<size_t>(*it)].count != 0) break;
            remove_node(*it);
        }
    }
}

void SuffixIndex::forget_oldest() {
    if (sequences_.empty()) return;
    count_substrings(sequences_.front(), -1);
    sequences_.pop_front();
}

void SuffixIndex::insert(std::span<const TokenId> tokens) {
    if (max_sequences_ <= 0 || tokens.empty()) return;
    // Each token adds at most max_depth nodes: a sequence that could not fit
    // on its own keeps its latest tokens, the likeliest to be repeated.
    const auto fits = static_cast<size_t>(max_nodes_ / max_depth_);
    if (tokens.size() > fits) tokens = tokens.last(fits);
    sequences_.emplace_back(tokens.begin(), tokens.end());
    count_substrings(sequences_.back(), +1);
    while (sequences_.size() > 1 && (static_cast<int32_t>(sequences_.size()) > max_sequences_ ||
                                     n_live_nodes_ > max_nodes_)) {
        forget_oldest();
    }
}

int32_t SuffixIndex::find(std::span<const TokenId> context, int32_t n) const {
    int32_t node = 0;
    for (const TokenId token : context.last(static_cast<size_t>(n))) {
        node = child(node, token);
        if (node == kNone) return kNone;
    }
    return node;
}

SuffixProposal SuffixIndex::follow(int32_t node, int32_t n_matched, int32_t max_tokens,
                                   double min_probability) const {
    SuffixProposal proposal;
    proposal.n_matched = n_matched;
    double probability = 1.0;
    for (int32_t depth = n_matched;
         depth < max_depth_ && proposal.tokens.size() < static_cast<size_t>(max_tokens); ++depth) {
        const Node& here = nodes_[static_cast<size_t>(node)];
        int32_t best = kNone;
        for (int32_t c = here.first_child; c != kNone;
             c = nodes_[static_cast<size_t>(c)].next_sibling) {
            const Node& candidate = nodes_[static_cast<size_t>(c)];
            // The most frequent continuation; the lower token id among equals,
            // so a proposal does not depend on the order of insertion.
            if (best == kNone || candidate.count > nodes_[static_cast<size_t>(best)].count ||
                (candidate.count == nodes_[static_cast<size_t>(best)].count &&
                 candidate.token < nodes_[static_cast<size_t>(best)].token)) {
                best = c;
            }
        }
        if (best == kNone) break;
        probability *= static_cast<double>(nodes_[static_cast<size_t>(best)].count) / here.count;
        if (probability < min_probability) break;
        proposal.tokens.push_back(nodes_[static_cast<size_t>(best)].token);
        proposal.score += probability;
        node = best;
    }
    return proposal;
}

SuffixProposal SuffixIndex::propose(std::span<const TokenId> context, int32_t max_tokens,
                                    double max_spec_factor, double min_probability) const {
    if (context.empty() || max_tokens <= 0) return {};
    // Every substring of a stored substring is stored, so if the last n
    // tokens are found, so are the last n - 1: binary search the longest.
    int32_t lo = 0;  // found (the empty suffix: the root)
    int32_t hi = std::min<int32_t>(max_depth_ - 1, static_cast<int32_t>(context.size()));
    while (lo < hi) {
        const int32_t mid = (lo + hi + 1) / 2;
        if (find(context, mid) != kNone) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    // A longer match is more specific evidence, but leaves less of the
    // index's depth to propose from (match plus proposal <= max_depth): of
    // every match length, the proposal with the most tokens expected to be
    // accepted wins (the longer match among equals).
    SuffixProposal best;
    for (int32_t n = lo; n >= 1; --n) {
        const auto limit =
            static_cast<int32_t>(std::min<double>(max_tokens, std::floor(max_spec_factor * n)));
        if (limit <= 0) break;
        SuffixProposal proposal = follow(find(context, n), n, limit, min_probability);
        if (proposal.score > best.score) best = std::move(proposal);
    }
    return best;
}

}  // namespace ladder::engine
