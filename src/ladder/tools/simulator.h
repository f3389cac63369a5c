// `ladder simulate`'s event loop: a workload's requests arrive (as `ladder
// bench` sends them: Poisson or all at once, at most max_concurrency in
// flight), a router spreads them over replicas, and each replica steps on
// its own clock. The result is a BenchRun, so that bench's summary, report
// and JSON serve the simulation unchanged.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "ladder/tools/bench_request.h"
#include "ladder/tools/bench_runner.h"
#include "ladder/tools/sim_profile.h"
#include "ladder/tools/sim_replica.h"
#include "ladder/tools/sim_router.h"

namespace ladder::tools {

struct SimulationOptions {
    StepProfile profile;
    ReplicaOptions replica;
    int32_t n_replicas = 1;
    RouterKind router = RouterKind::RoundRobin;
    double balance_factor = 1.25;
    double request_rate = std::numeric_limits<double>::infinity();
    int64_t max_concurrency = 0;  // 0: no limit
    uint64_t seed = 0;            // of the arrival times
};

struct SimulationResult {
    BenchRun run;
    int64_t n_steps = 0;
    int64_t n_preemptions = 0;
    // The most KV blocks any one replica had in use, and its capacity.
    int32_t peak_used_blocks = 0;
    int64_t n_kv_blocks = 0;
    int64_t n_prefix_queried_tokens = 0;
    int64_t n_prefix_hit_tokens = 0;
    std::vector<SimStep> steps;  // every step, when asked for (tests)
};

// The prompt as token ids: a payload of ids as it is; text (or chat
// messages) as ids drawn from a hash of each text, about one per token as
// bench estimates, so equal texts give equal ids and share cached blocks.
std::vector<int32_t> simulated_prompt(const BenchPrompt& prompt);

SimulationResult simulate(std::span<const SimRequest> requests, const SimulationOptions& options,
                          bool record_steps = false);
// The workload's prompts, arriving as `ladder bench` would send them.
std::vector<SimRequest> simulated_requests(const std::vector<BenchPrompt>& prompts,
                                           const SimulationOptions& options);

}  // namespace ladder::tools
