// `ladder run`: one prompt in, streamed text out, timings on stderr.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/cli/generation_options.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/engine/sampler.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

struct RunOptions {
    GenerationOptions generation;
    std::string prompt;
    bool chat = false;
    bool show_timings = true;
    bool json = false;
};

void run(const CLI::App& command, const RunOptions& options) {
    const engine::SamplingParams params = sampling_params(command, options.generation);
    const engine::ModelBundle bundle = engine::load_model_bundle(
        resolve_model_path(options.generation.model_path), options.generation.chat_template);
    bundle.model->set_attention_path(options.generation.attention);

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
    util::ThreadPool pool(options.generation.n_threads);
    engine::Session session(*bundle.model, pool, context);
    engine::Sampler sampler(params);

    engine::GenerationRequest request;
    request.prompt = prompt;
    request.max_new_tokens = options.generation.n_predict;
    std::string text_out;
    request.on_text = [&](std::string_view piece) {
        if (options.json) {
            text_out.append(piece);
            return;
        }
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
    };
    const engine::GenerationStats stats =
        engine::generate(session, sampler, *bundle.tokenizer, request);
    if (options.json) {
        const std::vector<int32_t>& held = session.tokens();
        const nlohmann::json out = {
            {"prompt_tokens", prompt},
            {"tokens", std::vector<int32_t>(
                           held.begin() + static_cast<std::ptrdiff_t>(prompt.size()), held.end())},
            {"text", text_out},
            {"finish_reason", engine::finish_reason_name(stats.finish_reason)},
            {"prompt_tokens_per_second",
             stats.prompt_seconds > 0 ? stats.n_prompt_tokens / stats.prompt_seconds : 0.0},
            {"generation_seconds", stats.generation_seconds},
            {"time_to_first_token_ms", stats.time_to_first_token * 1000.0},
        };
        std::printf("%s\n",
                    out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return;
    }
    std::fputc('\n', stdout);
    if (options.show_timings) print_timings(stats);
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
    command->callback([command, options] { run(*command, *options); });
}

}  // namespace ladder::cli
