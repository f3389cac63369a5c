// The trace's view of requests: one async span per request from arrival to
// finish with its phases nested in it (queued, each prefill chunk, decode,
// preemptions), and a flow that links the engine steps that computed it.
// Each call records nothing when tracing is off; the engine thread alone calls.
#pragma once

#include <cstdint>

#include "ladder/engine/request.h"
#include "ladder/engine/sequence.h"

namespace ladder::engine::request_trace {

void arrived(Sequence& sequence, int64_t ts_ns);
// Left the waiting queue (first admission or after a preemption).
void admitted(Sequence& sequence, int64_t ts_ns);
void preempted(Sequence& sequence, int64_t ts_ns);
// A step computed n_tokens of it, between start_ns and end_ns. prefill: the
// prompt (or, after a preemption, the tokens recomputed), not one new token.
void computed(Sequence& sequence, int32_t n_tokens, bool prefill, int64_t start_ns, int64_t end_ns);
void finished(Sequence& sequence, FinishReason reason, int64_t ts_ns);

}  // namespace ladder::engine::request_trace
