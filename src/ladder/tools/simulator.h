// `ladder simulate`'s event loop: a workload's requests arrive (as `ladder
// bench` sends them: at their arrival times, at most max_concurrency in
// flight), a router spreads them over replicas, and each replica steps on
// its own clock. Requests are drawn from a stream as the clock reaches them
// and handed to a sink when done, so memory holds only those in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_request.h"
#include "ladder/tools/bench_runner.h"
#include "ladder/tools/sim_profile.h"
#include "ladder/tools/sim_replica.h"
#include "ladder/tools/sim_router.h"
#include "ladder/tools/sim_summary.h"
#include "ladder/tools/sim_workload.h"

namespace ladder::tools {

struct SimulationOptions {
    StepProfile profile;
    ReplicaOptions replica;
    int32_t n_replicas = 1;
    RouterKind router = RouterKind::RoundRobin;
    double balance_factor = 1.25;
    ArrivalOptions arrivals;      // of bench's workloads (a trace brings its own times)
    int64_t max_concurrency = 0;  // 0: no limit
    // Disaggregated serving when both are set (n_replicas then unused): a
    // request prefills on one of the prefill replicas (the router picks), its
    // KV goes over the link to the least-loaded decode replica, which decodes.
    int32_t n_prefill_replicas = 0;
    int32_t n_decode_replicas = 0;
    // Each prefill replica's link for its KV, one transfer at a time.
    double kv_link_bytes_per_s = 50e9;  // 400 Gbit/s: one NDR InfiniBand NIC

    bool disaggregated() const { return n_prefill_replicas > 0 || n_decode_replicas > 0; }
    int32_t n_fleet_replicas() const {
        return disaggregated() ? n_prefill_replicas + n_decode_replicas : n_replicas;
    }
};

struct SimulationResult {
    BenchRun run;             // every request, from the simulate() that records them
    double duration_s = 0.0;  // from the first request released to the last finished
    int64_t n_requests = 0;
    int64_t n_steps = 0;
    int64_t n_preemptions = 0;
    // The most KV blocks any one replica had in use, and its capacity.
    int32_t peak_used_blocks = 0;
    int64_t n_kv_blocks = 0;
    int64_t n_prefix_queried_tokens = 0;
    int64_t n_prefix_hit_tokens = 0;  // from every tier
    // Of those, read back from the disk tiers and the remote tier (the
    // engine's n_disk_blocks_loaded and kv_remote_hits_total, in tokens).
    int64_t n_disk_hit_tokens = 0;
    int64_t n_remote_hit_tokens = 0;
    // Disaggregated: prompts' KV sent from prefill to decode replicas, and
    // the seconds the link spent sending them (summed over transfers).
    int64_t n_kv_transfers = 0;
    double kv_transfer_bytes = 0.0;
    double kv_transfer_s = 0.0;
    std::vector<SimStep> steps;  // every step, when asked for (tests)
};

// Adds the replicas' steps, preemptions, peak KV use and cache hits to
// result, and the profile's KV blocks: the end of either kind of run.
void add_replica_totals(std::span<const std::unique_ptr<SimReplica>> replicas,
                        const StepProfile& profile, SimulationResult& result);

// Called now and then as the simulation runs: the simulated time and the
// requests done so far.
using SimulationProgress = std::function<void(double simulated_s, int64_t n_done)>;

SimulationResult simulate(RequestStream& requests, RequestSink& sink,
                          const SimulationOptions& options, bool record_steps = false,
                          const SimulationProgress& progress = {});
// Requests given up front, every result kept in result.run.
SimulationResult simulate(std::span<const SimRequest> requests, const SimulationOptions& options,
                          bool record_steps = false);

}  // namespace ladder::tools
