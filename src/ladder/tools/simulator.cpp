#include "ladder/tools/simulator.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <queue>
#include <utility>

#include "ladder/tools/sim_disaggregated.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

// A request between its release and its last token.
struct InFlight {
    int64_t index = 0;
    double last_token_s = 0.0;
    RequestResult result;
};

// Steps between two progress reports: a fraction of a second of the loop.
constexpr int64_t kStepsPerProgress = 200000;

}  // namespace

void add_replica_totals(std::span<const std::unique_ptr<SimReplica>> replicas,
                        const StepProfile& profile, SimulationResult& result) {
    for (const auto& replica : replicas) {
        result.n_steps += replica->n_steps();
        result.n_preemptions += replica->n_preemptions();
        result.peak_used_blocks = std::max(result.peak_used_blocks, replica->peak_used_blocks());
        result.n_prefix_queried_tokens += replica->n_prefix_queried_tokens();
        result.n_prefix_hit_tokens += replica->n_prefix_hit_tokens();
        result.n_disk_hit_tokens += replica->n_disk_hit_blocks() * profile.block_size;
        result.n_remote_hit_tokens += replica->n_remote_hit_blocks() * profile.block_size;
    }
    result.n_kv_blocks = profile.n_kv_blocks;
}

SimulationResult simulate(RequestStream& requests, RequestSink& sink,
                          const SimulationOptions& options, bool record_steps,
                          const SimulationProgress& progress) {
    if (options.disaggregated()) {
        return simulate_disaggregated(requests, sink, options, record_steps, progress);
    }
    if (options.n_replicas < 1) util::fail("--replicas must be at least 1");
    SimulationResult result;
    const auto n_replicas = static_cast<size_t>(options.n_replicas);
    std::vector<int64_t> loads(n_replicas, 0);
    std::vector<InFlight> slots;
    std::vector<size_t> free_slots;
    int64_t n_in_flight = 0;
    int64_t n_done = 0;
    double first_release = -1.0;
    double last_finish = 0.0;

    // The fleet's one remote tier, which every replica writes to and reads from.
    std::unique_ptr<SimKvTier> remote;
    if (options.replica.prefix_caching && options.replica.remote.capacity_bytes > 0) {
        const double block_bytes = options.profile.kv_bytes_per_token * options.profile.block_size;
        if (!(block_bytes > 0.0)) {
            util::fail("--kv-remote-size needs the profile's kv_bytes_per_token");
        }
        remote = std::make_unique<SimKvTier>(std::max<int64_t>(
            1, static_cast<int64_t>(static_cast<double>(options.replica.remote.capacity_bytes) /
                                    block_bytes)));
    }
    std::vector<std::unique_ptr<SimReplica>> replicas;
    for (size_t r = 0; r < n_replicas; ++r) {
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
        events.on_finish = [&, r](int64_t slot, double time, int32_t n_cached) {
            InFlight& flight = slots[static_cast<size_t>(slot)];
            RequestResult& request = flight.result;
            request.success = true;
            request.e2e_s = time - request.start_s;
            request.usage_completion_tokens = request.n_stream_tokens;
            request.usage_cached_tokens = n_cached;
            sink.add(flight.index, std::move(request));
            free_slots.push_back(static_cast<size_t>(slot));
            --loads[r];
            --n_in_flight;
            ++n_done;
            last_finish = std::max(last_finish, time);
        };
        replicas.push_back(
            std::make_unique<SimReplica>(options.profile, options.replica, events, remote.get()));
    }

    const int64_t capacity_tokens = options.profile.n_kv_blocks * options.profile.block_size;
    Router router(options.router, options.balance_factor);
    using StepEnd = std::pair<double, size_t>;
    std::priority_queue<StepEnd, std::vector<StepEnd>, std::greater<>> step_ends;
    auto start_step = [&](size_t r, double now) {
        SimReplica& replica = *replicas[r];
        if (replica.in_step() || !replica.has_work()) return;
        const SimStep& step = replica.begin_step(now);
        if (record_steps) result.steps.push_back(step);
        step_ends.emplace(step.end_s, r);
    };

    SimRequest pending;  // the next request to release, drawn ahead by one
    bool has_pending = requests.next(pending);
    // The one being released. The two swap, so that drawing the next reuses
    // this one's token buffer (the replica copies the prompt it keeps).
    SimRequest request;
    std::vector<size_t> waking;  // replicas given requests at this instant
    const bool limited = options.max_concurrency > 0;
    // Requests arriving at one instant go into the same first step, as the
    // engine batches whatever is queued when it steps: the replicas they
    // went to start once the instant's last request is placed.
    auto start_woken_after = [&](double now) {
        const bool more_now = has_pending && pending.arrival_s <= now &&
                              (!limited || n_in_flight < options.max_concurrency);
        if (more_now) return;
        for (size_t woken : waking) start_step(woken, now);
        waking.clear();
    };
    int64_t steps_to_progress = kStepsPerProgress;
    while (has_pending || !step_ends.empty()) {
        const bool slot_free = !limited || n_in_flight < options.max_concurrency;
        const double release_s = has_pending && slot_free ? std::max(pending.arrival_s, 0.0)
                                                          : std::numeric_limits<double>::infinity();
        if (step_ends.empty() || release_s < step_ends.top().first) {
            if (!(release_s < std::numeric_limits<double>::infinity())) break;  // nothing can move
            // Released when it arrives or, under a concurrency limit, when a slot frees.
            const double now = std::max(release_s, limited ? last_finish : 0.0);
            std::swap(request, pending);
            has_pending = requests.next(pending);
            ++result.n_requests;
            RequestResult out;
            out.start_s = now;
            out.prompt_len_estimate = static_cast<int64_t>(request.prompt.size());
            out.usage_prompt_tokens = out.prompt_len_estimate;
            if (first_release < 0.0) first_release = now;
            if (static_cast<int64_t>(request.prompt.size()) + request.output_len >
                capacity_tokens) {
                out.error = fmt::format(
                    "the prompt ({} tokens) plus the output ({}) exceed a replica's KV cache ({} "
                    "tokens)",
                    request.prompt.size(), request.output_len, capacity_tokens);
                sink.add(request.index, std::move(out));
                ++n_done;
                start_woken_after(now);
                continue;
            }
            if (free_slots.empty()) {
                free_slots.push_back(slots.size());
                slots.emplace_back();
            }
            const size_t slot = free_slots.back();
            free_slots.pop_back();
            out.itls_s.reserve(static_cast<size_t>(request.output_len - 1));
            slots[slot] = InFlight{request.index, now, std::move(out)};
            request.slot = static_cast<int64_t>(slot);
            const size_t r = router.pick(request.prompt, loads);
            ++loads[r];
            ++n_in_flight;
            replicas[r]->add(request);
            waking.push_back(r);
            start_woken_after(now);
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

SimulationResult simulate(std::span<const SimRequest> requests, const SimulationOptions& options,
                          bool record_steps) {
    FixedRequests stream(requests);
    RunRecorder recorder;
    SimulationResult result = simulate(stream, recorder, options, record_steps);
    result.run = std::move(recorder.run());
    result.run.results.resize(requests.size());
    result.run.duration_s = result.duration_s;
    result.run.max_concurrency = options.max_concurrency;
    result.run.request_rate = options.arrivals.request_rate;
    return result;
}

}  // namespace ladder::tools
