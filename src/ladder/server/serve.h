// `ladder serve` from a loaded model to exit: the engine on its thread, the
// HTTP server, the ready line, and the drain on SIGTERM or SIGINT (stop
// taking new requests, let those in flight finish within the drain timeout,
// abort what is left, then close).
#pragma once

#include <cstdint>
#include <functional>

#include "ladder/engine/engine_config.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/server/server_config.h"

namespace ladder::server {

struct ServeOptions {
    ServerConfig server;
    engine::EngineConfig engine;
    int n_threads = 1;  // the engine's compute threads
};

// What the server says once it accepts connections.
struct Listening {
    int port = 0;
    int64_t max_connections = 0;    // held at once
    int64_t open_files_limit = 0;   // what bounded them, if fewer than asked for
    int loop_priority_refused = 0;  // errno: the realtime loop priority asked for was refused
};

using OnReady = std::function<void(const Listening& listening, const engine::KvCachePlan& plan)>;

// Returns after a signal and a drain. Throws util::InputError for a bad
// engine configuration or an address it cannot listen on.
void serve(engine::ModelBundle& bundle, const ServeOptions& options, const OnReady& on_ready);

}  // namespace ladder::server
