#include "ladder/tools/sim_router.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ladder/util/error.h"

namespace ladder::tools {

RouterKind parse_router(const std::string& name) {
    if (name == "round-robin") return RouterKind::RoundRobin;
    if (name == "least-loaded") return RouterKind::LeastLoaded;
    if (name == "prefix-affinity") return RouterKind::PrefixAffinity;
    util::fail("unknown --router '{}' (round-robin, least-loaded, prefix-affinity)", name);
}

Router::Router(RouterKind kind, double balance_factor, int32_t affinity_tokens)
    : kind_(kind), balance_factor_(balance_factor), affinity_tokens_(affinity_tokens) {}

size_t Router::pick(std::span<const int32_t> prompt, std::span<const int64_t> loads) {
    const size_t n = loads.size();
    switch (kind_) {
        case RouterKind::RoundRobin:
            return next_++ % n;
        case RouterKind::LeastLoaded:
            return static_cast<size_t>(std::min_element(loads.begin(), loads.end()) -
                                       loads.begin());
        case RouterKind::PrefixAffinity: {
            // FNV-1a over the leading tokens.
            uint64_t hash = 0xcbf29ce484222325ULL;
            const size_t n_hashed = std::min(prompt.size(), static_cast<size_t>(affinity_tokens_));
            for (size_t i = 0; i < n_hashed; ++i) {
                hash = (hash ^ static_cast<uint32_t>(prompt[i])) * 0x100000001b3ULL;
            }
            const int64_t total = std::accumulate(loads.begin(), loads.end(), int64_t{0});
            // A replica may hold this many once the request is counted.
            const auto bound = static_cast<int64_t>(std::ceil(
                balance_factor_ * static_cast<double>(total + 1) / static_cast<double>(n)));
            const size_t home = static_cast<size_t>(hash % n);
            for (size_t step = 0; step < n; ++step) {
                const size_t candidate = (home + step) % n;
                if (loads[candidate] + 1 <= bound) return candidate;
            }
            return home;
        }
    }
    return 0;
}

}  // namespace ladder::tools
