// What every route reads: the engine and its model, the server's settings,
// its metrics and the admission door. One per server, built before the first
// route runs and outliving the last.
#pragma once

#include <cstdint>

#include "ladder/engine/engine.h"
#include "ladder/engine/model_bundle.h"
#include "ladder/server/admission.h"
#include "ladder/server/server_config.h"
#include "ladder/server/server_metrics.h"

namespace ladder::server {

struct ServerContext {
    engine::Engine& engine;
    const engine::ModelBundle& bundle;
    const ServerConfig& config;
    ServerMetrics& metrics;
    Admission& admission;
    int64_t started_unix_seconds = 0;  // `created` of the model in /v1/models
};

}  // namespace ladder::server
