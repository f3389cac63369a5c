// `ladder serve`: an OpenAI-compatible HTTP server over the engine. Parses
// flags, loads the model and hands over to server::serve.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "ladder/cli/commands.h"
#include "ladder/cli/engine_options.h"
#include "ladder/cli/speculative_options.h"
#include "ladder/server/serve.h"

namespace ladder::cli {

namespace {

struct ServeFlags {
    EngineOptions engine;
    server::ServerConfig server;
    int64_t max_queue = -1;  // -1: no limit
};

void run_serve(const ServeFlags& flags) {
    server::ServeOptions options;
    options.n_threads = flags.engine.n_threads;
    options.server = flags.server;
    if (flags.max_queue >= 0) options.server.max_queue = flags.max_queue;
    if (options.server.n_http_threads == 0) {
        options.server.n_http_threads =
            server::http_threads_for(flags.engine.max_num_seqs, options.server.max_queue);
    }
    if (options.server.api_key.empty()) {
        if (const char* key = std::getenv("LADDER_API_KEY"); key != nullptr) {
            options.server.api_key = key;
        }
    }
    const std::string model_path = resolve_model_path(flags.engine.model_path);
    const std::filesystem::path file_name = std::filesystem::path(model_path).filename();
    options.server.model_file_name = file_name.string();
    if (options.server.served_model_name.empty()) {
        options.server.served_model_name = file_name.stem().string();
    }
    engine::ModelBundle bundle = engine::load_model_bundle(model_path, flags.engine.chat_template);
    options.engine = engine_config(flags.engine, bundle.identity);
    server::serve(bundle, options, [&](int port, const engine::KvCachePlan& plan) {
        const std::string speculative =
            options.engine.speculative ? ", " + speculative_summary(*options.engine.speculative)
                                       : std::string();
        std::printf("ladder serve: listening on http://%s:%d, model %s, %s, max_model_len %d%s%s\n",
                    options.server.host.c_str(), port, options.server.served_model_name.c_str(),
                    kv_cache_summary(plan).c_str(), plan.max_model_len, speculative.c_str(),
                    options.server.api_key.empty() ? "" : ", API key required");
        std::fflush(stdout);
    });
}

}  // namespace

void add_serve_command(CLI::App& app) {
    auto flags = std::make_shared<ServeFlags>();
    CLI::App* command =
        app.add_subcommand("serve", "Serve the model over an OpenAI-compatible HTTP API");
    add_engine_options(*command, flags->engine);
    server::ServerConfig& server = flags->server;
    command->add_option("--host", server.host, "address to listen on")->default_val(server.host);
    command->add_option("--port", server.port, "port to listen on; 0 picks a free one")
        ->default_val(server.port)
        ->check(CLI::Range(0, 65535));
    command->add_option("--api-key", server.api_key,
                        "require 'Authorization: Bearer KEY' on /v1 and tokenize routes "
                        "(default: $LADDER_API_KEY; none: open)");
    command->add_option("--served-model-name", server.served_model_name,
                        "the model's name in the API (default: the file name without .gguf; "
                        "the file name is accepted too)");
    command
        ->add_option("--max-queue", flags->max_queue,
                     "most requests waiting to run; more get 429 (default: no limit)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
    command
        ->add_option("--drain-timeout", server.drain_timeout_seconds,
                     "seconds that in-flight requests may take to finish after SIGTERM or "
                     "SIGINT; then they are aborted")
        ->default_val(server.drain_timeout_seconds)
        ->check(CLI::Range(0.0, 86400.0));
    command
        ->add_option("--http-threads", server.n_http_threads,
                     "connections served at once, a stream holding one (default: "
                     "max-num-seqs + max-queue + 64, at least 512)")
        ->check(CLI::Range(4, 65536));
    command
        ->add_option("--timeout", server.io_timeout_seconds,
                     "seconds a read or write on a connection may wait for the client")
        ->default_val(server.io_timeout_seconds)
        ->check(CLI::Range(1, 3600));
    command->callback([flags] { run_serve(*flags); });
}

}  // namespace ladder::cli
