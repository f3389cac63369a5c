// What `ladder serve` is told besides the engine's limits: where to listen,
// who may call, the model's names, and the bounds that keep one client from
// hurting the others. Defaults live here, flags override them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ladder/server/auth.h"

namespace ladder::server {

// How the event loop's thread asks the kernel for a CPU (http_server.cpp).
enum class LoopPriority {
    Normal,    // short turns: its wake-ups preempt the engine's threads (util/short_slice.h)
    Realtime,  // ahead of every normal thread (util/realtime_priority.h); Normal if refused
};

struct ServerConfig {
    std::string host = "127.0.0.1";
    int port = 8080;                   // 0: any free port (printed when ready)
    std::vector<ApiKey> api_keys;      // --api-key and --api-key-file; empty: no authentication
    std::string served_model_name;     // what /v1/models lists and responses name
    std::string model_file_name;       // also accepted as the model's name
    std::optional<int64_t> max_queue;  // requests waiting at most; unset: no limit (tests)
    double drain_timeout_seconds = 30.0;
    // Threads that run the routes' work (parsing bodies, tokenizing,
    // rendering whole responses); connections cost none. 0: one per core,
    // at least 2 (handler_threads_for).
    int n_http_threads = 0;
    int io_timeout_seconds = 30;              // a write the client does not take
    double request_timeout_seconds = 30.0;    // a request must arrive whole within this
    double keep_alive_timeout_seconds = 5.0;  // an idle connection between requests
    // Connections held at once (fewer when the open-files limit allows fewer);
    // a full server shares them out by address (connection_table.h).
    int64_t max_connections = 4096;
    size_t max_header_bytes = size_t{16} << 10;
    size_t max_body_bytes = size_t{8} << 20;
    // Host names accepted besides loopback ones (browser_safety.h).
    std::vector<std::string> allowed_hosts;
    // Origins whose web pages may call the API; "*": any.
    std::vector<std::string> allowed_origins;
    // The web page for chat and live metrics at / (--no-ui: none).
    bool web_ui = true;
    // Where POST /start_profile writes traces; empty: the profile routes are off.
    std::string trace_dir;
    LoopPriority loop_priority = LoopPriority::Normal;
};

// --max-queue's default: a few steps' worth of sequences waiting, so a burst
// is absorbed but an unbounded backlog (and its memory) is refused with 429.
int64_t default_max_queue(int32_t max_num_seqs);

// Handler threads for this many cores: one each, at least 2.
int handler_threads_for(unsigned n_cores);

// The name a request's `model` field may use: absent, the served name, or
// the file's name with or without ".gguf".
bool accepts_model_name(const ServerConfig& config, const std::string& name);

}  // namespace ladder::server
