// `ladder simulate --find-min-replicas`: the searches for the fewest replicas
// meeting the SLOs, colocated (one count) or disaggregated (a prefill and a
// decode count). They see the fleet only through a trial that runs it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ladder/tools/sim_summary.h"

namespace ladder::tools {

// One fleet a search ran.
struct ReplicasTried {
    int32_t n_replicas = 0;          // the whole fleet: prefill + decode when split
    int32_t n_prefill_replicas = 0;  // 0 and 0: colocated
    int32_t n_decode_replicas = 0;
    SloShares shares;  // shares.both is what the search asks to reach the target
};

struct ReplicaSearchLimits {
    double target = 0.99;         // the share of requests that must meet the SLOs
    int32_t max_replicas = 4096;  // the whole fleet's, beyond which the search gives up
};

// The shares at a colocated count, and at a (prefill, decode) split.
using ColocatedTrial = std::function<SloShares(int32_t n_replicas)>;
using SplitTrial = std::function<SloShares(int32_t n_prefill, int32_t n_decode)>;

struct ReplicaSplit {
    int32_t n_prefill = 0;
    int32_t n_decode = 0;
};

// Doubles from `start` until the share meeting both SLOs reaches the target,
// then bisects: the fewest replicas, assuming more never do worse. Every
// count run is appended to `tried`. Throws util::InputError past the limit.
int32_t search_min_replicas(const ColocatedTrial& trial, int32_t start,
                            const ReplicaSearchLimits& limits, std::vector<ReplicasTried>& tried);

// The fewest prefill + decode replicas, and for that total the split with the
// highest share, that reach the target: the prefill count by the TTFT share
// alone, the decode count by the TPOT share alone at that prefill count, then
// totals upward from their sum (sim_replica_search.cpp says why this is sound,
// and where it is a heuristic). Each pair is run once and appended to `tried`.
// Throws util::InputError past the limit.
ReplicaSplit search_min_split(const SplitTrial& trial, ReplicaSplit start,
                              const ReplicaSearchLimits& limits, std::vector<ReplicasTried>& tried);

}  // namespace ladder::tools
