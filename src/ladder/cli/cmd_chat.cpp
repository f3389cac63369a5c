// `ladder chat`: interactive multi-turn chat in the terminal. The session keeps
// the conversation's KV cache, so each turn computes only its new tokens.
// Ctrl-C stops the reply being written; Ctrl-D or /exit leaves.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "ladder/cli/commands.h"
#include "ladder/cli/generation_options.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/engine/sampler.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

std::atomic<bool> g_interrupt{false};

void on_sigint(int) { g_interrupt.store(true); }

struct ChatOptions {
    GenerationOptions generation;
    std::string system_prompt;
};

void run_chat(const CLI::App& command, const ChatOptions& options) {
    const engine::SamplingParams params = sampling_params(command, options.generation);
    const engine::ModelBundle bundle = engine::load_model_bundle(
        resolve_model_path(options.generation.model_path), options.generation.chat_template);
    bundle.model->set_attention_path(options.generation.attention);
    set_kv_cache_types(options.generation.kv_cache_types, *bundle.model);
    const tokenizer::ChatTemplate& chat_template = engine::require_chat_template(bundle);
    const int32_t context =
        std::min(options.generation.context, bundle.model->config().context_length);

    util::ThreadPool pool(options.generation.n_threads);
    engine::Session session(*bundle.model, pool, context);
    engine::Sampler sampler(params);
    std::vector<tokenizer::ChatMessage> history;
    if (!options.system_prompt.empty()) history.push_back({"system", options.system_prompt});
    const size_t n_fixed = history.size();

    std::signal(SIGINT, on_sigint);
    std::fprintf(stderr,
                 "ladder chat: %s, KV cache %s. Ctrl-C stops a reply, Ctrl-D or /exit quits.\n",
                 bundle.model->config().name.c_str(),
                 model::kv_cache_types_name(bundle.model->kv_cache_types()).c_str());
    std::string line;
    for (;;) {
        std::fputs("\n> ", stdout);
        std::fflush(stdout);
        if (!std::getline(std::cin, line)) break;
        if (line == "/exit" || line == "/quit") break;
        if (line.empty()) continue;
        history.push_back({"user", line});

        // Render the whole conversation, dropping the oldest turns while it
        // does not leave room for a reply.
        std::vector<int32_t> tokens;
        for (;;) {
            tokens = chat_template.encode(*bundle.tokenizer, chat_template.apply(history, true));
            const bool fits =
                static_cast<int64_t>(tokens.size()) + options.generation.n_predict <= context;
            if (fits || history.size() <= n_fixed + 1) break;
            history.erase(history.begin() + static_cast<std::ptrdiff_t>(n_fixed),
                          history.begin() + static_cast<std::ptrdiff_t>(n_fixed + 2));
        }
        if (static_cast<int64_t>(tokens.size()) >= context) {
            std::fprintf(stderr, "[the message is longer than the context of %d tokens]\n",
                         context);
            history.pop_back();
            continue;
        }
        // Reuse the cached KV of the longest common prefix (the earlier turns),
        // and compute only the rest.
        const std::vector<int32_t>& held = session.tokens();
        size_t common = 0;
        while (common < held.size() && common + 1 < tokens.size() &&
               held[common] == tokens[common]) {
            ++common;
        }
        session.truncate(static_cast<int32_t>(common));

        std::string reply;
        engine::GenerationRequest request;
        request.prompt = std::span<const int32_t>(tokens).subspan(common);
        request.max_new_tokens = std::min<int32_t>(options.generation.n_predict,
                                                   context - static_cast<int32_t>(tokens.size()));
        request.interrupt = &g_interrupt;
        request.on_text = [&reply](std::string_view piece) {
            reply.append(piece);
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        };
        g_interrupt.store(false);
        const engine::GenerationStats stats =
            engine::generate(session, sampler, *bundle.tokenizer, request);
        if (stats.finish_reason == engine::FinishReason::Abort) std::fputs(" [stopped]", stdout);
        std::fputc('\n', stdout);
        history.push_back({"assistant", reply});
    }
    std::fputc('\n', stdout);
}

}  // namespace

void add_chat_command(CLI::App& app) {
    auto options = std::make_shared<ChatOptions>();
    CLI::App* command = app.add_subcommand("chat", "Interactive multi-turn chat in the terminal");
    add_generation_options(*command, options->generation);
    command->add_option("--system", options->system_prompt, "system message");
    command->callback([command, options] { run_chat(*command, *options); });
}

}  // namespace ladder::cli
