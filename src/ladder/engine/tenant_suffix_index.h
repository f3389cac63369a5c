// The suffix drafter's store: one suffix index per cache salt (the tenant
// key the prefix cache uses), so one tenant's text never drafts for another
// (drafts decide how fast a request runs, which another tenant could time),
// all under one bound of stored sequences and nodes, the oldest forgotten first
// whoever stored it. The empty salt is the one unsalted index all share.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>

#include "ladder/engine/suffix_index.h"

namespace ladder::engine {

class TenantSuffixIndex {
public:
    TenantSuffixIndex(int32_t max_depth, int32_t max_sequences, int64_t max_nodes);

    // Stores a finished request's tokens in its salt's index.
    void insert(const std::string& salt, std::span<const TokenId> tokens);
    // The salt's index; null when it holds nothing.
    const SuffixIndex* find(const std::string& salt) const;

    int32_t n_sequences() const { return static_cast<int32_t>(order_.size()); }
    int64_t n_nodes() const { return n_nodes_; }
    int32_t n_salts() const { return static_cast<int32_t>(indexes_.size()); }
    int32_t max_depth() const { return max_depth_; }

private:
    void forget_oldest();
    // Drops the n oldest entries of salt from the order (its index forgot them).
    void drop_from_order(const std::string& salt, int32_t n);

    int32_t max_depth_;
    int32_t max_sequences_;
    int64_t max_nodes_;
    std::unordered_map<std::string, SuffixIndex> indexes_;
    std::deque<std::string> order_;  // the salt of every stored sequence, oldest first
    int64_t n_nodes_ = 0;            // over every index
};

}  // namespace ladder::engine
