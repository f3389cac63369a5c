// Which replica a simulated request goes to: round-robin, the least loaded
// (fewest requests in flight), or prefix affinity: the hash of the prompt's
// first tokens picks a replica, and a replica already holding more than
// `balance_factor` times the mean load passes the request to the next one
// (consistent hashing with bounded loads, as HAProxy's hash-balance-factor).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ladder::tools {

enum class RouterKind { RoundRobin, LeastLoaded, PrefixAffinity };

// "round-robin", "least-loaded", "prefix-affinity"; throws util::InputError
// naming --router and the valid names otherwise.
RouterKind parse_router(const std::string& name);

class Router {
public:
    // affinity_tokens: how many leading prompt tokens the affinity hashes.
    Router(RouterKind kind, double balance_factor = 1.25, int32_t affinity_tokens = 256);
    // loads: requests in flight on each replica.
    size_t pick(std::span<const int32_t> prompt, std::span<const int64_t> loads);

private:
    RouterKind kind_;
    double balance_factor_;
    int32_t affinity_tokens_;
    size_t next_ = 0;
};

}  // namespace ladder::tools
