// `ladder run`: one prompt in, streamed text out, timings on stderr. The
// prompt runs through the serving engine as a batch of one, so everything the
// engine does (speculative decoding included) applies to it.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/cli/generation_options.h"
#include "ladder/cli/speculative_options.h"
#include "ladder/cli/trace_option.h"
#include "ladder/engine/engine_core.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/trace.h"

namespace ladder::cli {

namespace {

struct RunOptions {
    GenerationOptions generation;
    std::string prompt;
    bool chat = false;
    bool show_timings = true;
    bool json = false;
    std::string speculative_config;
    std::string trace_path;
};

// What the one request produced, gathered from its outputs.
struct RunResult {
    std::vector<int32_t> tokens;
    engine::FinishReason finish_reason = engine::FinishReason::Abort;
    engine::RequestTimings timings;
    double last_token_time = 0.0;
    std::string error;  // with FinishReason::Error
};

engine::GenerationStats generation_stats(const RunResult& result, int32_t n_prompt_tokens) {
    const engine::RequestTimings& t = result.timings;
    engine::GenerationStats stats;
    stats.n_prompt_tokens = n_prompt_tokens;
    stats.n_generated_tokens = static_cast<int32_t>(result.tokens.size());
    stats.prompt_seconds = t.first_token - t.first_scheduled;
    stats.generation_seconds = result.last_token_time - t.first_token;
    stats.time_to_first_token = t.first_token - t.arrival;
    stats.finish_reason = result.finish_reason;
    return stats;
}

void run(const CLI::App& command, const RunOptions& options) {
    const engine::SamplingParams params = sampling_params(command, options.generation);
    const engine::ModelBundle bundle = engine::load_model_bundle(
        resolve_model_path(options.generation.model_path), options.generation.chat_template);
    bundle.model->set_attention_path(options.generation.attention);
    set_kv_cache_types(options.generation.kv_cache_types, *bundle.model);

    // A chat prompt carries the template's control tokens; a plain prompt is
    // user text, where such strings stay text.
    std::vector<int32_t> prompt;
    if (options.chat) {
        const tokenizer::ChatTemplate& chat_template = engine::require_chat_template(bundle);
        const tokenizer::ChatMessage message{"user", options.prompt};
        prompt = chat_template.encode(*bundle.tokenizer, chat_template.apply({&message, 1}, true));
    } else {
        prompt = bundle.tokenizer->encode(options.prompt, true, false);
    }
    if (prompt.empty()) util::fail("the prompt is empty");

    const int32_t context =
        std::min(options.generation.context, bundle.model->config().context_length);
    if (static_cast<int64_t>(prompt.size()) >= context) {
        util::fail("the prompt has {} tokens, more than the context of {} (-c)", prompt.size(),
                   context);
    }
    engine::EngineConfig config;
    config.max_num_seqs = 1;
    config.max_model_len = context;
    config.prefix_caching = false;
    config.speculative = parse_speculative_config(options.speculative_config);
    const util::trace::TraceFile trace(options.trace_path);
    util::trace::set_thread_name("engine");
    util::ThreadPool pool(options.generation.n_threads);
    engine::EngineCore core(*bundle.model, *bundle.tokenizer, pool, config);

    engine::RequestParams request;
    request.prompt = prompt;
    request.sampling = params;
    // A full context ends the output (finish reason length), as -n does.
    request.max_tokens = std::min<int32_t>(options.generation.n_predict,
                                           context - static_cast<int32_t>(prompt.size()));
    std::string text_out;
    RunResult result;
    auto sink = [&](engine::RequestOutput&& output) {
        result.tokens.insert(result.tokens.end(), output.token_ids.begin(),
                             output.token_ids.end());
        if (!output.token_ids.empty()) result.last_token_time = output.time;
        result.timings = output.timings;
        if (output.finish_reason) result.finish_reason = *output.finish_reason;
        if (!output.error.empty()) result.error = output.error;
        if (options.json) {
            text_out += output.text;
        } else if (!output.text.empty()) {
            std::fwrite(output.text.data(), 1, output.text.size(), stdout);
            std::fflush(stdout);
        }
    };
    core.add_request(engine::RequestId{1}, std::move(request), sink);
    while (core.has_work()) core.step();
    if (result.finish_reason == engine::FinishReason::Error) util::fail("{}", result.error);
    const engine::GenerationStats stats =
        generation_stats(result, static_cast<int32_t>(prompt.size()));
    if (options.json) {
        nlohmann::json out = {
            {"prompt_tokens", prompt},
            {"tokens", result.tokens},
            {"text", text_out},
            {"finish_reason", engine::finish_reason_name(stats.finish_reason)},
            {"prompt_tokens_per_second",
             stats.prompt_seconds > 0 ? stats.n_prompt_tokens / stats.prompt_seconds : 0.0},
            {"generation_seconds", stats.generation_seconds},
            {"time_to_first_token_ms", stats.time_to_first_token * 1000.0},
        };
        if (config.speculative) {
            const engine::SpecDecodeStats& spec = core.stats().spec_decode;
            out["spec_decode_num_drafts"] = spec.n_drafts;
            out["spec_decode_draft_tokens"] = spec.n_draft_tokens;
            out["spec_decode_accepted_tokens"] = spec.n_accepted_tokens;
        }
        std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return;
    }
    std::fputc('\n', stdout);
    if (options.show_timings) {
        print_timings(stats);
        if (config.speculative) {
            std::fprintf(stderr, "[%s]\n", speculative_stats_line(core.stats().spec_decode).c_str());
        }
    }
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* command =
        app.add_subcommand("run", "Generate text from a prompt, streamed to stdout");
    add_generation_options(*command, options->generation);
    command->add_option("-p,--prompt", options->prompt, "the prompt")->required();
    command->add_flag("--chat", options->chat,
                      "wrap the prompt as a user message in the model's chat template");
    command->add_flag("!--no-timings", options->show_timings, "do not print timings to stderr");
    command->add_flag("--json", options->json,
                      "print one JSON object (prompt and generated token ids, text, timings)");
    add_speculative_option(*command, options->speculative_config);
    add_trace_option(*command, options->trace_path);
    command->callback([command, options] { run(*command, *options); });
}

}  // namespace ladder::cli
