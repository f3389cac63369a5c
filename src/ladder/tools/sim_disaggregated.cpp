#include "ladder/tools/sim_disaggregated.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <span>
#include <utility>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// A request between its release and its last token.
struct InFlight {
    int64_t index = 0;
    double last_token_s = 0.0;
    RequestResult result;
    SimRequest request;  // kept for its decode replica
    size_t prefill = 0;  // the replica that computed its prompt
    size_t decode = 0;
    int32_t n_cached = 0;  // prompt tokens the prefill replica's cache served
};

constexpr int64_t kStepsPerProgress = 200000;

using TimedEvent = std::pair<double, size_t>;
using EventQueue = std::priority_queue<TimedEvent, std::vector<TimedEvent>, std::greater<>>;

void check_options(const SimulationOptions& options) {
    if (options.n_prefill_replicas < 1 || options.n_decode_replicas < 1) {
        util::fail("--prefill-replicas and --decode-replicas must both be at least 1");
    }
    if (!(options.profile.kv_bytes_per_token > 0.0)) {
        util::fail("--prefill-replicas needs the profile's kv_bytes_per_token (the KV to send)");
    }
    if (!(options.kv_link_bytes_per_s > 0.0)) util::fail("--kv-link-gbps must be positive");
}

}  // namespace

SimulationResult simulate_disaggregated(RequestStream& requests, RequestSink& sink,
                                        const SimulationOptions& options, bool record_steps,
                                        const SimulationProgress& progress) {
    check_options(options);
    SimulationResult result;
    const auto n_prefill = static_cast<size_t>(options.n_prefill_replicas);
    const auto n_decode = static_cast<size_t>(options.n_decode_replicas);
    // Replicas [0, n_prefill) prefill, the rest decode; loads by the same index.
    std::vector<int64_t> loads(n_prefill + n_decode, 0);
    std::vector<double> link_free_s(n_prefill, 0.0);
    std::vector<InFlight> slots;
    std::vector<size_t> free_slots;
    int64_t n_in_flight = 0;
    int64_t n_done = 0;
    double first_release = -1.0;
    double last_finish = 0.0;

    std::unique_ptr<SimKvTier> remote;
    if (options.replica.prefix_caching && options.replica.remote.capacity_bytes > 0) {
        const double block_bytes = options.profile.kv_bytes_per_token * options.profile.block_size;
        remote = std::make_unique<SimKvTier>(std::max<int64_t>(
            1, static_cast<int64_t>(static_cast<double>(options.replica.remote.capacity_bytes) /
                                    block_bytes)));
    }
    auto finish = [&](size_t slot, size_t replica, double time) {
        InFlight& flight = slots[slot];
        RequestResult& request = flight.result;
        request.success = true;
        request.e2e_s = time - request.start_s;
        request.usage_completion_tokens = request.n_stream_tokens;
        request.usage_cached_tokens = flight.n_cached;
        sink.add(flight.index, std::move(request));
        free_slots.push_back(slot);
        --loads[replica];
        --n_in_flight;
        ++n_done;
        last_finish = std::max(last_finish, time);
    };
    EventQueue transfers;  // (when the KV has arrived, slot)
    std::vector<std::unique_ptr<SimReplica>> replicas;
    for (size_t r = 0; r < n_prefill + n_decode; ++r) {
        SimEvents events;
        events.on_token = [&](int64_t slot, double time) {
            InFlight& flight = slots[static_cast<size_t>(slot)];
            RequestResult& request = flight.result;
            if (request.n_stream_tokens == 0) {
                request.ttft_s = time - request.start_s;
            } else {
                request.itls_s.push_back(time - flight.last_token_s);
            }
            ++request.n_stream_tokens;
            flight.last_token_s = time;
        };
        if (r < n_prefill) {
            events.on_finish = [&, r](int64_t slot, double time, int32_t n_cached) {
                InFlight& flight = slots[static_cast<size_t>(slot)];
                flight.n_cached = n_cached;
                if (flight.request.output_len <= 1) {
                    finish(static_cast<size_t>(slot), r, time);
                    return;
                }
                // The link sends one prompt's KV at a time, in finishing order.
                const double bytes = options.profile.kv_bytes_per_token *
                                     static_cast<double>(flight.request.prompt.size());
                const double seconds = bytes / options.kv_link_bytes_per_s;
                const double start = std::max(time, link_free_s[r]);
                link_free_s[r] = start + seconds;
                transfers.emplace(start + seconds, static_cast<size_t>(slot));
                ++result.n_kv_transfers;
                result.kv_transfer_bytes += bytes;
                result.kv_transfer_s += seconds;
            };
        } else {
            events.on_finish = [&, r](int64_t slot, double time, int32_t) {
                finish(static_cast<size_t>(slot), r, time);
            };
        }
        replicas.push_back(
            std::make_unique<SimReplica>(options.profile, options.replica, events, remote.get()));
    }

    const int64_t capacity_tokens = options.profile.n_kv_blocks * options.profile.block_size;
    Router router(options.router, options.balance_factor);
    Router decode_router(RouterKind::LeastLoaded);
    EventQueue step_ends;  // (when, replica)
    auto start_step = [&](size_t r, double now) {
        SimReplica& replica = *replicas[r];
        if (replica.in_step() || !replica.has_work()) return;
        const SimStep& step = replica.begin_step(now);
        if (!replica.in_step()) return;  // waits for held blocks to be released
        if (record_steps) result.steps.push_back(step);
        step_ends.emplace(step.end_s, r);
    };

    SimRequest pending;
    bool has_pending = requests.next(pending);
    SimRequest request;
    std::vector<size_t> waking;  // prefill replicas given requests at this instant
    const bool limited = options.max_concurrency > 0;
    auto start_woken_after = [&](double now) {
        const bool more_now = has_pending && pending.arrival_s <= now &&
                              (!limited || n_in_flight < options.max_concurrency);
        if (more_now) return;
        for (size_t woken : waking) start_step(woken, now);
        waking.clear();
    };
    auto release = [&](double now) {
        std::swap(request, pending);
        has_pending = requests.next(pending);
        ++result.n_requests;
        RequestResult out;
        out.start_s = now;
        out.prompt_len_estimate = static_cast<int64_t>(request.prompt.size());
        out.usage_prompt_tokens = out.prompt_len_estimate;
        if (first_release < 0.0) first_release = now;
        if (static_cast<int64_t>(request.prompt.size()) + request.output_len > capacity_tokens) {
            out.error = fmt::format(
                "the prompt ({} tokens) plus the output ({}) exceed a replica's KV cache ({} "
                "tokens)",
                request.prompt.size(), request.output_len, capacity_tokens);
            sink.add(request.index, std::move(out));
            ++n_done;
            return;
        }
        if (free_slots.empty()) {
            free_slots.push_back(slots.size());
            slots.emplace_back();
        }
        const size_t slot = free_slots.back();
        free_slots.pop_back();
        out.itls_s.reserve(static_cast<size_t>(request.output_len - 1));
        InFlight& flight = slots[slot];
        flight.index = request.index;
        flight.last_token_s = now;
        flight.result = std::move(out);
        flight.n_cached = 0;
        flight.request = request;  // reuses the slot's buffer
        flight.request.slot = static_cast<int64_t>(slot);
        const size_t r = router.pick(request.prompt, std::span(loads).first(n_prefill));
        flight.prefill = r;
        ++loads[r];
        ++n_in_flight;
        // The prefill replica computes the prompt and gives the first token.
        SimRequest& kept = flight.request;
        const int32_t output_len = kept.output_len;
        kept.output_len = 1;
        kept.hold_kv = output_len > 1;
        replicas[r]->add(kept);
        kept.output_len = output_len;
        kept.hold_kv = false;
        waking.push_back(r);
    };
    // The KV has reached the decode side: the prefill replica frees it.
    auto arrive = [&](size_t slot, double now) {
        InFlight& flight = slots[slot];
        replicas[flight.prefill]->release_held(static_cast<int64_t>(slot));
        --loads[flight.prefill];
        const size_t d =
            n_prefill + decode_router.pick(flight.request.prompt, std::span(loads).subspan(n_prefill));
        flight.decode = d;
        ++loads[d];
        flight.request.prefilled = true;
        replicas[d]->add(flight.request);
        flight.request.prefilled = false;
        start_step(d, now);
        start_step(flight.prefill, now);  // the freed blocks may admit a waiting prompt
    };

    constexpr double kNever = std::numeric_limits<double>::infinity();
    int64_t steps_to_progress = kStepsPerProgress;
    while (has_pending || !step_ends.empty() || !transfers.empty()) {
        const bool slot_free = !limited || n_in_flight < options.max_concurrency;
        const double release_s =
            has_pending && slot_free ? std::max(pending.arrival_s, 0.0) : kNever;
        const double step_s = step_ends.empty() ? kNever : step_ends.top().first;
        const double transfer_s = transfers.empty() ? kNever : transfers.top().first;
        if (release_s < std::min(step_s, transfer_s)) {
            // Released when it arrives or, under a concurrency limit, when a slot frees.
            const double now = std::max(release_s, limited ? last_finish : 0.0);
            release(now);
            start_woken_after(now);
            continue;
        }
        if (!(std::min(step_s, transfer_s) < kNever)) break;  // nothing can move
        if (transfer_s <= step_s) {
            const auto [now, slot] = transfers.top();
            transfers.pop();
            arrive(slot, now);
            continue;
        }
        const auto [now, r] = step_ends.top();
        step_ends.pop();
        replicas[r]->end_step();
        start_step(r, now);
        if (progress && --steps_to_progress == 0) {
            steps_to_progress = kStepsPerProgress;
            progress(now, n_done);
        }
    }
    if (has_pending) util::fail("the simulation stalled with requests unsent");

    result.duration_s = first_release < 0.0 ? 0.0 : std::max(0.0, last_finish - first_release);
    add_replica_totals(replicas, options.profile, result);
    return result;
}

}  // namespace ladder::tools
