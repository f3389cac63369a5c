// Each route group registers itself; one file per group.
#pragma once

#include <string_view>

#include "ladder/server/router.h"
#include "ladder/server/server_context.h"

namespace ladder::server {

// POST /v1/completions
void add_completions_routes(Router& router, ServerContext& context);
// POST /v1/chat/completions
void add_chat_routes(Router& router, ServerContext& context);
// GET /v1/models, /v1/models/{id}, /health
void add_model_routes(Router& router, ServerContext& context);
// POST /tokenize, /detokenize
void add_tokenize_routes(Router& router, ServerContext& context);
// GET /metrics
void add_metrics_routes(Router& router, ServerContext& context);
// GET /, /ui/{file}: the built-in web page (ServerConfig::web_ui)
void add_web_routes(Router& router);
// Whether an If-None-Match header names etag (or is "*"); W/ tags compare weakly.
bool etag_matches(std::string_view if_none_match, std::string_view etag);
// POST /start_profile, /stop_profile (with --trace-dir)
void add_profile_routes(Router& router, ServerContext& context);

}  // namespace ladder::server
