// `ladder simulate` with prefill and decode on separate replicas, as
// DistServe, Mooncake and vLLM's disaggregated prefill run them: a request's
// prompt is computed on a prefill replica, whose step gives its first token;
// its KV (kv_bytes_per_token x prompt tokens) then crosses that replica's
// link, one transfer at a time, to a decode replica, which allocates the
// blocks and generates the rest. The prefill side frees its blocks once the
// transfer ends. TTFT is queueing plus prefill; the transfer delays the
// second token.
#pragma once

#include "ladder/tools/simulator.h"

namespace ladder::tools {

// simulate() with options.n_prefill_replicas and n_decode_replicas set.
// Throws util::InputError when either is below 1 or the profile lacks
// kv_bytes_per_token or the link rate is not positive.
SimulationResult simulate_disaggregated(RequestStream& requests, RequestSink& sink,
                                        const SimulationOptions& options, bool record_steps,
                                        const SimulationProgress& progress);

}  // namespace ladder::tools
