#include "ladder/engine/tenant_suffix_index.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::engine {

TenantSuffixIndex::TenantSuffixIndex(int32_t max_depth, int32_t max_sequences, int64_t max_nodes)
    : max_depth_(max_depth), max_sequences_(max_sequences), max_nodes_(max_nodes) {
    LADDER_CHECK(max_depth > 0 && max_nodes > max_depth, "a suffix index needs depth and room");
}

void TenantSuffixIndex::insert(const std::string& salt, std::span<const TokenId> tokens) {
    if (max_sequences_ <= 0 || tokens.empty()) return;
    // Each index has the whole bound too: one tenant alone may use it all.
    SuffixIndex& index =
        indexes_.try_emplace(salt, max_depth_, max_sequences_, max_nodes_).first->second;
    const int32_t n_before = index.n_sequences();
    const int64_t nodes_before = index.n_nodes();
    index.insert(tokens);
    n_nodes_ += index.n_nodes() - nodes_before;
    order_.push_back(salt);
    // Past its own bound the index forgot its oldest, which leave the order.
    drop_from_order(salt, n_before + 1 - index.n_sequences());
    while (order_.size() > 1 && (n_sequences() > max_sequences_ || n_nodes_ > max_nodes_)) {
        forget_oldest();
    }
}

const SuffixIndex* TenantSuffixIndex::find(const std::string& salt) const {
    const auto it = indexes_.find(salt);
    return it == indexes_.end() ? nullptr : &it->second;
}

void TenantSuffixIndex::forget_oldest() {
    const auto it = indexes_.find(order_.front());
    LADDER_CHECK(it != indexes_.end(), "a stored sequence's salt has no index");
    order_.pop_front();
    SuffixIndex& index = it->second;
    const int64_t nodes_before = index.n_nodes();
    index.forget_oldest();
    n_nodes_ -= nodes_before - index.n_nodes();
    if (index.n_sequences() == 0) indexes_.erase(it);
}

void TenantSuffixIndex::drop_from_order(const std::string& salt, int32_t n) {
    for (auto it = order_.begin(); n > 0 && it != order_.end();) {
        if (*it == salt) {
            it = order_.erase(it);
            --n;
        } else {
            ++it;
        }
    }
}

}  // namespace ladder::engine
