// `ladder serve`: an OpenAI-compatible HTTP server over the engine. Parses
// flags, loads the model and hands over to server::serve.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ladder/cli/commands.h"
#include "ladder/cli/engine_options.h"
#include "ladder/cli/speculative_options.h"
#include "ladder/cli/trace_option.h"
#include "ladder/server/serve.h"
#include "ladder/util/trace.h"

namespace ladder::cli {

namespace {

struct ServeFlags {
    EngineOptions engine;
    server::ServerConfig server;
    int64_t max_queue = 0;  // 0: server::default_max_queue()
    std::string api_key;
    std::string api_key_file;
    std::string trace_path;
};

// --api-key-file's keys and --api-key's (else $LADDER_API_KEY's); none: open.
std::vector<server::ApiKey> api_keys(const ServeFlags& flags) {
    std::vector<server::ApiKey> keys;
    if (!flags.api_key_file.empty()) {
        keys = server::read_api_key_file(flags.api_key_file);
        struct stat info {};
        if (::stat(flags.api_key_file.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
            std::fprintf(stderr, "ladder serve: warning: other users may read %s (chmod 600 it)\n",
                         flags.api_key_file.c_str());
        }
    }
    std::string key = flags.api_key;
    if (key.empty() && flags.api_key_file.empty()) {
        if (const char* from_env = std::getenv("LADDER_API_KEY"); from_env != nullptr)
            key = from_env;
    }
    if (!key.empty()) keys.push_back({key, key});
    return keys;
}

void run_serve(const ServeFlags& flags) {
    server::ServeOptions options;
    options.n_threads = flags.engine.n_threads;
    options.server = flags.server;
    options.server.max_queue = flags.max_queue > 0
                                   ? flags.max_queue
                                   : server::default_max_queue(flags.engine.max_num_seqs);
    if (options.server.n_http_threads == 0) {
        options.server.n_http_threads =
            server::handler_threads_for(std::thread::hardware_concurrency());
    }
    options.server.api_keys = api_keys(flags);
    const std::string model_path = resolve_model_path(flags.engine.model_path);
    const std::filesystem::path file_name = std::filesystem::path(model_path).filename();
    options.server.model_file_name = file_name.string();
    if (options.server.served_model_name.empty()) {
        options.server.served_model_name = file_name.stem().string();
    }
    engine::ModelBundle bundle = load_engine_bundle(flags.engine, model_path);
    options.engine = engine_config(flags.engine, bundle);
    // Closed after serve() returns: after the drain that SIGTERM starts.
    const util::trace::TraceFile trace(flags.trace_path);
    server::serve(
        bundle, options, [&](const server::Listening& listening, const engine::KvCachePlan& plan) {
            const std::string connections =
                listening.max_connections < options.server.max_connections
                    ? fmt::format("up to {} connections (open-files limit {})",
                                  listening.max_connections, listening.open_files_limit)
                    : fmt::format("up to {} connections", listening.max_connections);
            const std::string speculative =
                options.engine.speculative
                    ? ", " + speculative_summary(*options.engine.speculative)
                    : std::string();
            const std::string remote = options.engine.kv_remote
                                           ? ", KV remote tier " + options.engine.kv_remote->url()
                                           : std::string();
            const bool realtime_loop =
                options.server.loop_priority == server::LoopPriority::Realtime;
            if (realtime_loop && listening.loop_priority_refused != 0) {
                std::fprintf(stderr,
                             "ladder serve: warning: --loop-priority realtime refused (%s; it "
                             "needs CAP_SYS_NICE or `ulimit -r` of 1 or more): the event loop "
                             "runs at normal priority\n",
                             std::strerror(listening.loop_priority_refused));
            }
            const std::string loop = realtime_loop && listening.loop_priority_refused == 0
                                         ? ", event loop at realtime priority"
                                         : "";
            std::printf(
                "ladder serve: listening on http://%s:%d, model %s, %s, max_model_len %d%s, "
                "%s%s%s%s\n",
                options.server.host.c_str(), listening.port,
                options.server.served_model_name.c_str(), kv_cache_summary(plan).c_str(),
                plan.max_model_len, speculative.c_str(), connections.c_str(),
                options.server.api_keys.empty() ? "" : ", API key required", remote.c_str(),
                loop.c_str());
            if (options.server.web_ui) {
                std::printf("ladder serve: chat and dashboard at http://%s:%d/\n",
                            options.server.host.c_str(), listening.port);
            }
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
    command->add_option("--api-key", flags->api_key,
                        "require 'Authorization: Bearer KEY' on /v1 and tokenize routes "
                        "(default: $LADDER_API_KEY unless --api-key-file; none: open)");
    command
        ->add_option("--api-key-file", flags->api_key_file,
                     "API keys, one a line, each optionally followed by a tenant name; "
                     "tenants never share cached prefixes")
        ->check(CLI::ExistingFile);
    command->add_option("--served-model-name", server.served_model_name,
                        "the model's name in the API (default: the file name without .gguf; "
                        "the file name is accepted too)");
    command
        ->add_option("--max-queue", flags->max_queue,
                     "most requests waiting to run; more get 429 (default: 4 x --max-num-seqs)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    command
        ->add_option("--drain-timeout", server.drain_timeout_seconds,
                     "seconds that in-flight requests may take to finish after SIGTERM or "
                     "SIGINT; then they are aborted")
        ->default_val(server.drain_timeout_seconds)
        ->check(CLI::Range(0.0, 86400.0));
    command
        ->add_option("--http-threads", server.n_http_threads,
                     "threads that run the routes' work: parsing bodies, tokenizing, rendering "
                     "(default: one per core, at least 2); connections cost no thread")
        ->check(CLI::Range(1, 1024));
    command
        ->add_option("--timeout", server.io_timeout_seconds,
                     "seconds a client may leave a write untaken (a stream it stops reading) "
                     "before it is dropped and its request aborted")
        ->default_val(server.io_timeout_seconds)
        ->check(CLI::Range(1, 3600));
    command
        ->add_option("--request-timeout", server.request_timeout_seconds,
                     "seconds a request may take to arrive whole (header and body); then 408 "
                     "and the connection closes")
        ->default_val(server.request_timeout_seconds)
        ->check(CLI::Range(0.1, 3600.0));
    command
        ->add_option("--keep-alive-timeout", server.keep_alive_timeout_seconds,
                     "seconds an idle connection is kept between requests")
        ->default_val(server.keep_alive_timeout_seconds)
        ->check(CLI::Range(0.1, 3600.0));
    command
        ->add_option("--max-connections", server.max_connections,
                     "connections held at once (fewer if the open-files limit allows fewer); a "
                     "full server shares them out by client address")
        ->default_val(server.max_connections)
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
    command
        ->add_option("--allowed-hosts", server.allowed_hosts,
                     "Host header names accepted besides loopback ones (comma-separated; '*': "
                     "any). On a loopback address only loopback names are accepted without it")
        ->delimiter(',');
    command
        ->add_option("--allowed-origins", server.allowed_origins,
                     "origins of web pages that may call the API from a browser, as "
                     "'https://app.example' (comma-separated; '*': any). Default: none but the "
                     "server's own")
        ->delimiter(',');
    command->add_flag("!--no-ui", server.web_ui,
                      "serve no web page at / (by default it offers a chat with the model and "
                      "a live dashboard of /metrics)");
    const std::map<std::string, server::LoopPriority> loop_priorities = {
        {"normal", server::LoopPriority::Normal}, {"realtime", server::LoopPriority::Realtime}};
    command
        ->add_option("--loop-priority", server.loop_priority,
                     "the event loop's claim on a CPU: normal (short turns, ahead of the "
                     "engine's threads) or realtime (the kernel's FIFO policy: each token's "
                     "chunk leaves at once even on a busy machine; needs CAP_SYS_NICE or "
                     "`ulimit -r` >= 1, else it warns and stays normal). A flood of requests "
                     "then takes the loop's CPU from the engine")
        ->transform(CLI::CheckedTransformer(loop_priorities, CLI::ignore_case))
        ->default_str("normal");
    add_trace_option(*command, flags->trace_path);
    command
        ->add_option("--trace-dir", server.trace_dir,
                     "where POST /start_profile writes its trace (ladder-trace-<time>.json) "
                     "until POST /stop_profile; without it those routes answer 404")
        ->check(CLI::ExistingDirectory);
    command->callback([flags] { run_serve(*flags); });
}

}  // namespace ladder::cli
