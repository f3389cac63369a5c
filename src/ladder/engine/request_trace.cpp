#include "ladder/engine/request_trace.h"

#include "ladder/util/trace.h"

namespace ladder::engine::request_trace {

namespace {

namespace trace = util::trace;

constexpr const char* kCategory = "request";

uint64_t trace_id(const Sequence& sequence) { return static_cast<uint64_t>(sequence.id); }

// Opens the request's span in the trace now open if it has none there: a
// request that arrived before the trace started shows from its first event.
bool ensure_span(Sequence& sequence, int64_t ts_ns) {
    if (!trace::enabled()) return false;
    const uint32_t session = trace::session();
    if (sequence.trace.session == session) return true;
    sequence.trace = {.session = session};
    trace::async(trace::Phase::AsyncBegin, kCategory, "request", trace_id(sequence), ts_ns,
                 {{"request", static_cast<int64_t>(sequence.id)},
                  {"prompt_tokens", sequence.n_prompt_tokens}});
    return true;
}

void end_phase(Sequence& sequence, int64_t ts_ns) {
    if (sequence.trace.queued) {
        trace::async(trace::Phase::AsyncEnd, kCategory, "queued", trace_id(sequence), ts_ns);
        sequence.trace.queued = false;
    }
    if (sequence.trace.decoding) {
        trace::async(trace::Phase::AsyncEnd, kCategory, "decode", trace_id(sequence), ts_ns);
        sequence.trace.decoding = false;
    }
}

}  // namespace

void arrived(Sequence& sequence, int64_t ts_ns) {
    if (!ensure_span(sequence, ts_ns)) return;
    trace::async(trace::Phase::AsyncBegin, kCategory, "queued", trace_id(sequence), ts_ns);
    sequence.trace.queued = true;
}

void admitted(Sequence& sequence, int64_t ts_ns) {
    if (!ensure_span(sequence, ts_ns)) return;
    end_phase(sequence, ts_ns);
}

void preempted(Sequence& sequence, int64_t ts_ns) {
    if (!ensure_span(sequence, ts_ns)) return;
    end_phase(sequence, ts_ns);
    trace::async(trace::Phase::AsyncInstant, kCategory, "preempted", trace_id(sequence), ts_ns,
                 {{"generated_tokens", sequence.n_generated()}});
    trace::async(trace::Phase::AsyncBegin, kCategory, "queued", trace_id(sequence), ts_ns);
    sequence.trace.queued = true;
}

void computed(Sequence& sequence, int32_t n_tokens, bool prefill, int64_t start_ns,
              int64_t end_ns) {
    if (!ensure_span(sequence, start_ns)) return;
    if (sequence.trace.queued || prefill) end_phase(sequence, start_ns);
    // The flow's events sit inside the step's slice on the engine's track,
    // so the viewer draws an arrow from each step of the request to the next.
    trace::flow(sequence.trace.flow_started ? trace::Phase::FlowStep : trace::Phase::FlowStart,
                "request", trace_id(sequence), start_ns);
    sequence.trace.flow_started = true;
    if (prefill) {
        trace::async(trace::Phase::AsyncBegin, kCategory, "prefill", trace_id(sequence), start_ns,
                     {{"tokens", n_tokens}});
        trace::async(trace::Phase::AsyncEnd, kCategory, "prefill", trace_id(sequence), end_ns);
    } else if (!sequence.trace.decoding) {
        // One span over every decode step, until it finishes or is preempted.
        trace::async(trace::Phase::AsyncBegin, kCategory, "decode", trace_id(sequence), start_ns);
        sequence.trace.decoding = true;
    }
}

void finished(Sequence& sequence, FinishReason reason, int64_t ts_ns) {
    if (!ensure_span(sequence, ts_ns)) return;
    end_phase(sequence, ts_ns);
    if (sequence.trace.flow_started)
        trace::flow(trace::Phase::FlowEnd, "request", trace_id(sequence), ts_ns);
    trace::async(trace::Phase::AsyncEnd, kCategory, "request", trace_id(sequence), ts_ns,
                 {{"finish_reason", 0, finish_reason_name(reason)},
                  {"generated_tokens", sequence.n_generated()}});
}

}  // namespace ladder::engine::request_trace
