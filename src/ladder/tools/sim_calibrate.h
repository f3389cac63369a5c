// `ladder simulate calibrate`: measures this engine's step costs. A grid of
// workloads (B requests of P prompt tokens and N outputs, all at once) runs
// through the real engine, step by step; the same workload runs through the
// simulator, whose steps must match the engine's in tokens (it is the
// engine's scheduler) and give each step's work: the positions its prompt
// and decode rows attend to, the distinct KV positions it reads, its logit
// rows (StepWork). sim_step_fit's fit of seconds on that work gives the
// profile. The grid runs several times, on fresh prompts of the same shapes
// (so the same steps), and each step's median time is fitted: a host that
// slows for a while (another job on a shared machine) moves one pass, not
// the profile.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ladder/engine/engine_core.h"
#include "ladder/tools/sim_profile.h"
#include "ladder/tools/sim_replica.h"
#include "ladder/tools/sim_step_fit.h"
#include "ladder/tools/trace_summary.h"

namespace ladder::tools {

struct CalibrationShape {
    int32_t n_requests;
    int32_t prompt_len;
    int32_t output_len;
    // One prompt for every request: the prefix cache computes it once, so
    // many decodes run at a long context for the price of one prefill.
    bool shared_prompt = false;
};

// Decodes at batch sizes from 1 to 32 and at short and long contexts (many
// of them long, where attention is a large part of the step), and prompts
// of each power of two from 64 to 1,024 tokens: every octave of the rows
// curve has steps of its own.
std::vector<CalibrationShape> default_calibration_grid();

struct Calibration {
    StepProfile profile;
    int64_t n_steps = 0;
    // Steps whose tokens or logit rows differed between engine and simulator.
    int64_t n_mismatched_steps = 0;
    // Each pass's seconds over the steps fitted: how steady the machine was.
    std::vector<double> pass_seconds;
};

// One step as the engine ran it, beside the simulator's step at that place.
struct MeasuredStep {
    int32_t engine_tokens = 0;
    int32_t engine_logit_rows = 0;
    bool simulated = false;  // false: the simulator had no step here
    StepWork work;           // the simulator's step
    double seconds = 0.0;    // the engine's
};

// Runs one workload (all requests at once, random prompts from seed)
// through the idle engine and through the simulator with the engine's KV
// plan and `replica`'s settings; one entry per engine step.
std::vector<MeasuredStep> measure_workload(engine::EngineCore& core, const ReplicaOptions& replica,
                                           const CalibrationShape& shape, uint64_t seed);

// The engine must be idle, with `replica` its scheduler settings. Runs the
// grid `n_passes` times (at least 1) and fits each step's median seconds
// (the lower median for an even count).
Calibration calibrate(engine::EngineCore& core, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source,
                      int32_t n_passes = 3);

// The same with several idle engines of one model and settings running the
// grid at once, each on its own thread and prompts (replicas that share a
// host: their steps contend for its memory bandwidth and caches); each
// step's median is over every engine's passes, and pass_seconds lists each
// engine's passes in turn. An engine that finishes first leaves the others
// a little less contention for their last steps.
Calibration calibrate(std::span<engine::EngineCore* const> cores, const ReplicaOptions& replica,
                      const std::vector<CalibrationShape>& grid, const std::string& source,
                      int32_t n_passes = 3);

// The same fit on the steps of served runs' traces (`ladder serve --trace`;
// a fleet's replicas each write one): each step's duration against the shape
// its args give. So the profile has the costs the engines had while they
// served, with the servers' own threads, their router and their clients
// beside them on the machine. `plan` is the KV plan of the servers' engine
// flags. `held`: prices taken from elsewhere (a grid calibration) rather
// than fitted. Throws util::InputError when no step carries a shape.
Calibration calibrate_from_traces(std::span<const TraceSummary> traces,
                                  const engine::KvCachePlan& plan, const std::string& source,
                                  const HeldPrices& held = {});

}  // namespace ladder::tools
