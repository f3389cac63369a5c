// `ladder generate`: offline batch inference (vLLM's LLM.generate as a
// command). Each input line is an OpenAI-style request; all of them run
// through the engine together; each output line answers its input line.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/cli/engine_options.h"
#include "ladder/cli/speculative_options.h"
#include "ladder/cli/trace_option.h"
#include "ladder/engine/batch_runner.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/server/openai_request.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/timer.h"
#include "ladder/util/trace.h"

namespace ladder::cli {

namespace {

using json = nlohmann::json;

struct GenerateOptions {
    EngineOptions engine;
    std::string input_path;
    std::string output_path = "-";
    bool progress = true;
    std::string trace_path;
};

// One input line: its requests are choices [first, first + count) of the batch.
struct InputLine {
    size_t first = 0;
    size_t count = 0;
    size_t n_per_prompt = 1;  // choices of each of its prompts
};

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (path != "-") {
        file.open(path);
        if (!file) util::fail("cannot open '{}' for reading", path);
        in = &file;
    }
    std::vector<std::string> lines;
    for (std::string line; std::getline(*in, line);) lines.push_back(line);
    return lines;
}

// Parses every line into one engine request per choice (server::engine_requests).
// Checks each against the engine's limits too, so an error names its line.
std::vector<engine::RequestParams> parse_requests(const std::vector<std::string>& lines,
                                                  const engine::ModelBundle& bundle,
                                                  const engine::EngineCore& core,
                                                  std::vector<InputLine>& inputs) {
    std::vector<engine::RequestParams> requests;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            const json body = json::parse(lines[i]);
            const nlohmann::ordered_json written = nlohmann::ordered_json::parse(lines[i]);
            const bool chat = body.is_object() && body.contains("messages");
            const server::CompletionRequest request = server::parse_completion_request(
                body, chat ? server::Endpoint::ChatCompletions : server::Endpoint::Completions,
                bundle, core.kv_plan().max_model_len, &written);
            InputLine input{requests.size(), 0, static_cast<size_t>(request.n)};
            for (engine::RequestParams& params : server::engine_requests(request)) {
                core.validate(params);
                requests.push_back(std::move(params));
                ++input.count;
            }
            inputs.push_back(input);
        } catch (const json::exception& error) {
            util::fail("line {}: not valid JSON: {}", i + 1, error.what());
        } catch (const util::InputError& error) {
            util::fail("line {}: {}", i + 1, error.what());
        }
    }
    if (requests.empty()) util::fail("no requests in the input");
    return requests;
}

json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
    return {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", prompt_tokens + completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

json choice_json(const engine::BatchResult& result, size_t index) {
    json choice = {{"index", index},
                   {"text", result.text},
                   {"finish_reason", engine::finish_reason_name(result.finish_reason)},
                   {"token_ids", result.token_ids}};
    if (result.finish_reason == engine::FinishReason::Error) choice["error"] = result.error;
    if (!result.logprobs.empty()) {
        json logprobs = json::array();
        for (const engine::TokenLogprob& lp : result.logprobs) {
            json top = json::array();
            for (const auto& [id, value] : lp.top) top.push_back({{"id", id}, {"logprob", value}});
            logprobs.push_back({{"id", lp.id}, {"logprob", lp.logprob}, {"top_logprobs", top}});
        }
        choice["logprobs"] = logprobs;
    }
    return choice;
}

// Seconds: waiting for the first step, to the first token, to the end, and
// per output token after the first.
json timings_json(const engine::BatchResult& result) {
    const engine::RequestTimings& t = result.timings;
    const auto n = static_cast<double>(result.token_ids.size());
    const double tpot = n > 1 ? (result.last_token_time - t.first_token) / (n - 1) : 0.0;
    return {{"queue_s", t.first_scheduled - t.arrival},
            {"ttft_s", t.first_token - t.arrival},
            {"e2e_s", t.finished - t.arrival},
            {"tpot_s", tpot}};
}

json line_json(size_t index, const InputLine& input,
               const std::vector<engine::BatchResult>& results) {
    json choices = json::array();
    int64_t prompt_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t cached_tokens = 0;
    for (size_t c = 0; c < input.count; ++c) {
        const engine::BatchResult& result = results[input.first + c];
        choices.push_back(choice_json(result, c));
        // Choices of one prompt share it: it counts once, as in OpenAI's usage.
        if (c % input.n_per_prompt == 0) {
            prompt_tokens += result.n_prompt_tokens;
            cached_tokens += result.n_cached_prompt_tokens;
        }
        completion_tokens += static_cast<int64_t>(result.token_ids.size());
    }
    const engine::BatchResult& first = results[input.first];
    json line = {{"index", index},
                 {"text", first.text},
                 {"finish_reason", engine::finish_reason_name(first.finish_reason)},
                 {"usage", usage_json(prompt_tokens, completion_tokens, cached_tokens)},
                 {"timings", timings_json(first)}};
    if (first.finish_reason == engine::FinishReason::Error) line["error"] = first.error;
    if (input.count > 1) line["choices"] = std::move(choices);
    return line;
}

// "[=========>          ] 12/32 requests" on stderr, redrawn in place at most
// ten times a second.
class ProgressBar {
public:
    explicit ProgressBar(bool enabled) : enabled_(enabled) {}
    void update(int64_t done, int64_t total) {
        const double now = util::now_seconds();
        if (!enabled_ || (done < total && now - last_draw_ < 0.1)) return;
        last_draw_ = now;
        constexpr int kWidth = 30;
        const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
        std::fprintf(stderr, "\r[%s%s] %lld/%lld requests",
                     std::string(static_cast<size_t>(filled), '=').c_str(),
                     std::string(static_cast<size_t>(kWidth - filled), ' ').c_str(),
                     static_cast<long long>(done), static_cast<long long>(total));
        if (done == total) std::fputc('\n', stderr);
    }

private:
    bool enabled_;
    double last_draw_ = 0.0;
};

void print_summary(const std::vector<engine::BatchResult>& results, double seconds,
                   const engine::EngineStats& stats, const engine::KvPeak& kv_peak) {
    int64_t prompt_tokens = 0;
    int64_t generated = 0;
    int64_t preemptions = 0;
    for (const engine::BatchResult& r : results) {
        prompt_tokens += r.n_prompt_tokens;
        generated += static_cast<int64_t>(r.token_ids.size());
        preemptions += r.n_preemptions;
    }
    std::fprintf(stderr,
                 "generate: %zu requests, %lld prompt + %lld generated tokens in %.2f s: "
                 "%.1f output tokens/s, %.1f total tokens/s, %lld preemptions\n",
                 results.size(), static_cast<long long>(prompt_tokens),
                 static_cast<long long>(generated), seconds,
                 static_cast<double>(generated) / seconds,
                 static_cast<double>(prompt_tokens + generated) / seconds,
                 static_cast<long long>(preemptions));
    const double steps = static_cast<double>(std::max<int64_t>(stats.n_steps, 1));
    std::fprintf(stderr,
                 "generate: %lld steps, per step: forward %.2f ms, sampling %.2f ms, "
                 "scheduling and outputs %.1f us\n",
                 static_cast<long long>(stats.n_steps), 1e3 * stats.forward_seconds / steps,
                 1e3 * stats.sampling_seconds / steps, 1e6 * stats.overhead_seconds / steps);
    // Shared prefix blocks hold tokens of several sequences, so tokens can
    // exceed slots; without sharing the gap is the last partial blocks.
    std::fprintf(stderr,
                 "generate: KV at its peak: %d blocks = %lld token slots for %lld tokens of "
                 "live sequences; prefix cache: %lld of %lld prompt tokens found\n",
                 kv_peak.n_blocks_used, static_cast<long long>(kv_peak.n_slots),
                 static_cast<long long>(kv_peak.n_kv_tokens),
                 static_cast<long long>(stats.n_prefix_hit_tokens),
                 static_cast<long long>(stats.n_prefix_queried_tokens));
    if (!stats.spec_decode.n_accepted_per_position.empty()) {
        std::fprintf(stderr, "generate: %s\n", speculative_stats_line(stats.spec_decode).c_str());
    }
}

void run_generate(const GenerateOptions& options) {
    engine::ModelBundle bundle =
        load_engine_bundle(options.engine, resolve_model_path(options.engine.model_path));
    const util::trace::TraceFile trace(options.trace_path);
    util::trace::set_thread_name("engine");
    util::ThreadPool pool(options.engine.n_threads);
    engine::EngineCore core(*bundle.model, *bundle.tokenizer, pool,
                            engine_config(options.engine, bundle));
    std::vector<InputLine> inputs;
    std::vector<engine::RequestParams> requests =
        parse_requests(read_lines(options.input_path), bundle, core, inputs);
    std::fprintf(stderr, "%s\n", kv_cache_summary(core.kv_plan()).c_str());
    if (const engine::Speculator* speculator = core.speculator()) {
        std::fprintf(stderr, "%s\n", speculative_summary(speculator->config()).c_str());
    }

    ProgressBar bar(options.progress);
    const double start = util::now_seconds();
    engine::KvPeak kv_peak;
    const std::vector<engine::BatchResult> results = engine::run_batch(
        core, std::move(requests), [&](int64_t done, int64_t total) { bar.update(done, total); },
        &kv_peak);
    const double seconds = util::now_seconds() - start;

    std::ofstream file;
    std::ostream* out = &std::cout;
    if (options.output_path != "-") {
        file.open(options.output_path);
        if (!file) util::fail("cannot open '{}' for writing", options.output_path);
        out = &file;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
        *out << line_json(i, inputs[i], results).dump() << '\n';
    out->flush();
    if (!*out) util::fail("writing '{}' failed", options.output_path);
    print_summary(results, seconds, core.stats(), kv_peak);
}

}  // namespace

void add_generate_command(CLI::App& app) {
    auto options = std::make_shared<GenerateOptions>();
    CLI::App* command = app.add_subcommand(
        "generate", "run a file of requests through the engine together (offline batch)");
    add_engine_options(*command, options->engine);
    command
        ->add_option("-i,--input", options->input_path,
                     "JSONL requests, one per line: prompt or messages, with OpenAI's "
                     "sampling fields (max_tokens, temperature, top_p, seed, stop, n, ...) "
                     "and ignore_eos; - for stdin")
        ->required();
    command->add_option("-o,--output", options->output_path,
                        "JSONL results in input order: text, finish_reason, usage, timings; "
                        "- for stdout (default)");
    command->add_flag("!--no-progress", options->progress, "no progress bar on stderr");
    add_trace_option(*command, options->trace_path);
    command->callback([options] { run_generate(*options); });
}

}  // namespace ladder::cli
