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

struct ServerConfig {
    std::string host = "127.0.0.1";
    int port = 8080;                   // 0: any free port (printed when ready)
    std::vector<ApiKey> api_keys;      // --api-key and --api-key-file; empty: no authentication
    std::string served_model_name;     // what /v1/models lists and responses name
    std::string model_file_name;       // also accepted as the model's name
    std::optional<int64_t> max_queue;  // requests waiting at most; unset: no limit (tests)
    double drain_timeout_seconds = 30.0;
    // One thread per open connection (a stream holds its thread), so this
    // bounds the connections served at once; more wait to be accepted.
    // 0: http_threads_for() the engine's limits.
    int n_http_threads = 0;
    int io_timeout_seconds = 30;  // a read or write that makes no progress
    size_t max_body_bytes = size_t{8} << 20;
};

// --max-queue's default: a few steps' worth of sequences waiting, so a burst
// is absorbed but an unbounded backlog (and its memory) is refused with 429.
int64_t default_max_queue(int32_t max_num_seqs);

// Enough connection threads for every sequence that can run and every
// request that may wait, plus room for health checks and scrapes; at least
// 512.
int http_threads_for(int32_t max_num_seqs, std::optional<int64_t> max_queue);

// The name a request's `model` field may use: absent, the served name, or
// the file's name with or without ".gguf".
bool accepts_model_name(const ServerConfig& config, const std::string& name);

}  // namespace ladder::server
