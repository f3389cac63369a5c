#include "ladder/tools/sim_replica_search.h"

#include <algorithm>
#include <map>
#include <utility>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// The fewest n in [1, max] with meets(n): doubles from start until one
// meets, then bisects below it, assuming meets() never turns false as n
// grows. nullopt when even max does not meet.
std::optional<int32_t> fewest_meeting(int32_t start, int32_t max,
                                      const std::function<bool(int32_t)>& meets) {
    int32_t low = 0;  // the most known to fall short
    int32_t high = std::clamp(start, 1, std::max(1, max));
    while (!meets(high)) {
        if (high >= max) return std::nullopt;
        low = high;
        high = static_cast<int32_t>(std::min<int64_t>(max, int64_t{high} * 2));
    }
    while (high - low > 1) {
        const int32_t middle = low + (high - low) / 2;
        if (meets(middle)) {
            high = middle;
        } else {
            low = middle;
        }
    }
    return high;
}

}  // namespace

int32_t search_min_replicas(const ColocatedTrial& trial, int32_t start,
                            const ReplicaSearchLimits& limits, std::vector<ReplicasTried>& tried) {
    const auto fewest = fewest_meeting(start, limits.max_replicas, [&](int32_t n) {
        const SloShares shares = trial(n);
        tried.push_back({n, 0, 0, shares});
        return shares.both >= limits.target;
    });
    if (!fewest) {
        util::fail("--find-min-replicas: {} replicas still miss the SLOs for {:.1f}% of requests",
                   limits.max_replicas, 100.0 * limits.target);
    }
    return *fewest;
}

// Why the three steps find the fewest replicas:
//  - A request's first token comes from the prefill replica's step, and
//    nothing on the decode side holds a prefill back (a transfer never waits
//    for room there), so the TTFT share is a function of the prefill count
//    alone. Any pair meeting both SLOs meets the TTFT one, so it has at least
//    the prefill count step 1 finds: exact, given more prefill replicas never
//    do worse (the colocated search's assumption). Under --max-concurrency a
//    release waits for decodes to finish, and this becomes a heuristic.
//  - The TPOT share is mostly the decode group's; the prefill side reaches it
//    through the transfer before the second token and the rate prompts reach
//    the decode side. Too few prefill replicas throttle that rate (their
//    queue grows and the decode side, under-fed, looks fast), so step 2 runs
//    at step 1's prefill count, the fewest that keep up, not at the given
//    one. Above it the decode side sees the request rate whatever the prefill
//    count, so the decode count found there is taken as a floor for every
//    pair: a heuristic, sound as long as more prefill replicas do not make
//    TPOT worse (they only shorten the prefill and link queues).
//  - Meeting both is rarer than meeting either (the requests that miss TTFT
//    and those that miss TPOT need not be the same), so step 3 walks the
//    totals up from the two floors' sum, trying every split above both
//    floors at each total; the first total where one meets is the fewest.
ReplicaSplit search_min_split(const SplitTrial& trial, ReplicaSplit start,
                              const ReplicaSearchLimits& limits,
                              std::vector<ReplicasTried>& tried) {
    const int32_t max = limits.max_replicas;
    if (max < 2) util::fail("--max-replicas must be at least 2 for a prefill and a decode replica");
    std::map<std::pair<int32_t, int32_t>, SloShares> runs;  // each pair is run once
    auto shares_at = [&](int32_t n_prefill, int32_t n_decode) {
        const auto [it, fresh] = runs.try_emplace({n_prefill, n_decode});
        if (fresh) {
            it->second = trial(n_prefill, n_decode);
            tried.push_back({n_prefill + n_decode, n_prefill, n_decode, it->second});
        }
        return it->second;
    };
    const int32_t decode_start = std::clamp(start.n_decode, 1, max - 1);
    const auto n_prefill = fewest_meeting(start.n_prefill, max - decode_start, [&](int32_t p) {
        return shares_at(p, decode_start).ttft >= limits.target;
    });
    if (!n_prefill) {
        util::fail(
            "--find-min-replicas: {} prefill replicas (with {} decode) still miss the TTFT SLO "
            "for {:.1f}% of requests (--max-replicas {})",
            max - decode_start, decode_start, 100.0 * limits.target, max);
    }
    const int32_t p_floor = *n_prefill;
    const auto n_decode = fewest_meeting(start.n_decode, max - p_floor, [&](int32_t d) {
        return shares_at(p_floor, d).tpot >= limits.target;
    });
    if (!n_decode) {
        util::fail(
            "--find-min-replicas: {} decode replicas (with {} prefill) still miss the TPOT SLO "
            "for {:.1f}% of requests (--max-replicas {})",
            max - p_floor, p_floor, 100.0 * limits.target, max);
    }
    const int32_t d_floor = *n_decode;
    for (int32_t total = p_floor + d_floor; total <= max; ++total) {
        std::optional<ReplicaSplit> best;
        double best_share = 0.0;
        for (int32_t p = p_floor; p <= total - d_floor; ++p) {
            const double share = shares_at(p, total - p).both;
            if (share >= limits.target && (!best || share > best_share)) {
                best = ReplicaSplit{p, total - p};
                best_share = share;
            }
        }
        if (best) return *best;
    }
    util::fail(
        "--find-min-replicas: {} prefill + decode replicas still miss the SLOs for {:.1f}% "
        "of requests",
        max, 100.0 * limits.target);
}

}  // namespace ladder::tools
