#include "ladder/tools/simulator.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <queue>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_dataset.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

void append_text_tokens(const std::string& text, std::vector<int32_t>& tokens) {
    uint64_t state = std::hash<std::string>{}(text) | 1;
    for (int64_t i = 0; i < estimate_tokens(text); ++i) {
        // xorshift64*: a reproducible stream of ids from the text's hash.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        tokens.push_back(static_cast<int32_t>((state * 0x2545F4914F6CDD1DULL) >> 33));
    }
}

}  // namespace

std::vector<int32_t> simulated_prompt(const BenchPrompt& prompt) {
    std::vector<int32_t> tokens;
    const nlohmann::json& payload = prompt.payload;
    if (payload.is_string()) {
        append_text_tokens(payload.get<std::string>(), tokens);
    } else if (payload.is_array()) {
        for (const nlohmann::json& item : payload) {
            if (item.is_number_integer()) {
                tokens.push_back(item.get<int32_t>());
            } else if (item.is_object() && item.contains("content") &&
                       item["content"].is_string()) {
                append_text_tokens(item["content"].get<std::string>(), tokens);
            }
        }
    }
    if (tokens.empty()) tokens.push_back(0);
    return tokens;
}

std::vector<SimRequest> simulated_requests(const std::vector<BenchPrompt>& prompts,
                                           const SimulationOptions& options) {
    const std::vector<double> arrivals =
        arrival_times(static_cast<int64_t>(prompts.size()), options.request_rate, options.seed);
    std::vector<SimRequest> requests;
    requests.reserve(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
        requests.push_back(
            SimRequest{static_cast<int64_t>(i), arrivals[i], simulated_prompt(prompts[i]),
                       static_cast<int32_t>(std::max<int64_t>(1, prompts[i].max_tokens))});
    }
    return requests;
}

SimulationResult simulate(std::span<const SimRequest> requests, const SimulationOptions& options,
                          bool record_steps) {
    if (options.n_replicas < 1) util::fail("--replicas must be at least 1");
    SimulationResult result;
    BenchRun& run = result.run;
    run.results.resize(requests.size());
    run.max_concurrency = options.max_concurrency;
    run.request_rate = options.request_rate;
    std::vector<double> last_token_s(requests.size(), 0.0);
    const auto n_replicas = static_cast<size_t>(options.n_replicas);
    std::vector<int64_t> loads(n_replicas, 0);
    int64_t n_in_flight = 0;
    double first_release = -1.0;
    double last_finish = 0.0;

    std::vector<std::unique_ptr<SimReplica>> replicas;
    for (size_t r = 0; r < n_replicas; ++r) {
        SimEvents events;
        events.on_token = [&](int64_t index, double time) {
            RequestResult& request = run.results[static_cast<size_t>(index)];
            if (request.n_stream_tokens == 0) {
                request.ttft_s = time - request.start_s;
            } else {
                request.itls_s.push_back(time - last_token_s[static_cast<size_t>(index)]);
            }
            ++request.n_stream_tokens;
            last_token_s[static_cast<size_t>(index)] = time;
        };
        events.on_finish = [&, r](int64_t index, double time, int32_t n_cached) {
            RequestResult& request = run.results[static_cast<size_t>(index)];
            request.success = true;
            request.e2e_s = time - request.start_s;
            request.usage_completion_tokens = request.n_stream_tokens;
            request.usage_cached_tokens = n_cached;
            --loads[r];
            --n_in_flight;
            last_finish = std::max(last_finish, time);
        };
        replicas.push_back(std::make_unique<SimReplica>(options.profile, options.replica, events));
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

    size_t next = 0;             // the next request to release, in arrival order
    std::vector<size_t> waking;  // replicas given requests at this instant
    const bool limited = options.max_concurrency > 0;
    // Requests arriving at one instant go into the same first step, as the
    // engine batches whatever is queued when it steps: the replicas they
    // went to start once the instant's last request is placed.
    auto start_woken_after = [&](double now) {
        const bool more_now = next < requests.size() && requests[next].arrival_s <= now &&
                              (!limited || n_in_flight < options.max_concurrency);
        if (more_now) return;
        for (size_t woken : waking) start_step(woken, now);
        waking.clear();
    };
    while (next < requests.size() || !step_ends.empty()) {
        const bool slot_free = !limited || n_in_flight < options.max_concurrency;
        const double release_s = next < requests.size() && slot_free
                                     ? std::max(requests[next].arrival_s, 0.0)
                                     : std::numeric_limits<double>::infinity();
        if (step_ends.empty() || release_s < step_ends.top().first) {
            if (!(release_s < std::numeric_limits<double>::infinity())) break;  // nothing can move
            // Released when it arrives or, under a concurrency limit, when a slot frees.
            const double now = std::max(release_s, limited ? last_finish : 0.0);
            const SimRequest& request = requests[next++];
            RequestResult& out = run.results[static_cast<size_t>(request.index)];
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
                start_woken_after(now);
                continue;
            }
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
    }
    if (next < requests.size()) util::fail("the simulation stalled with requests unsent");

    run.duration_s = first_release < 0.0 ? 0.0 : std::max(0.0, last_finish - first_release);
    for (const auto& replica : replicas) {
        result.n_steps += replica->n_steps();
        result.n_preemptions += replica->n_preemptions();
        result.peak_used_blocks = std::max(result.peak_used_blocks, replica->peak_used_blocks());
        result.n_prefix_queried_tokens += replica->n_prefix_queried_tokens();
        result.n_prefix_hit_tokens += replica->n_prefix_hit_tokens();
    }
    result.n_kv_blocks = options.profile.n_kv_blocks;
    return result;
}

}  // namespace ladder::tools
